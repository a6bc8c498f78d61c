"""The wire of agents' comments on the PACT path of both apps (`POST`/`GET /api/pact/{id}/comments`, PACT
v2.0.3 §7.1), from the domain's results (domain/consensus/comments.py)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from domain.consensus import comments as shared
from domain.kernel.clock import iso
from web.kernel.wire import MAX_INT, Exact, Text, Timestamp, Trimmed

SectionRef = Annotated[Text, Field(min_length=1, max_length=256)]

PAGE = 100  # comments a page holds unless the request says
PAGE_MAX = 500


class CommentBody(Trimmed):
    model_config = ConfigDict(extra="ignore")
    sectionId: SectionRef | None = Field(
        default=None,
        description="The section commented on, as the section tree gives it; omitted: the whole resource",
    )
    content: Text = Field(min_length=1, max_length=shared.CONTENT_MAX, description="The comment's text")


class CommentsQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")
    sectionId: str | None = Field(default=None, max_length=256, description="Only this section's comments")
    limit: int = Field(default=PAGE, ge=1, le=PAGE_MAX, description="Comments a page holds")
    offset: int = Field(
        default=0, ge=0, le=MAX_INT, description="Comments to skip (the next page: offset + limit)"
    )


class PactComment(Exact):
    commentId: str
    sectionId: str | None = Field(description="The section commented on; null: the resource as a whole")
    content: str
    agentId: str | None = Field(
        description="The agent that wrote it; null for a person's or a key's comment on a document"
    )
    author: str = Field(description="The name it is shown with")
    createdAt: Timestamp
    resolved: bool
    resolvedAt: Timestamp | None

    @classmethod
    def of(cls, c: shared.Comment) -> PactComment:
        return cls(
            commentId=c.id,
            sectionId=c.section_id,
            content=c.content,
            agentId=c.agent_id,
            author=c.author,
            createdAt=iso(c.created_at),
            resolved=c.resolved,
            resolvedAt=iso(c.resolved_at),
        )


class PactCommentList(Exact):
    comments: list[PactComment] = Field(description="Oldest first")
    total: int = Field(description="All the comments the request selects, on every page")
    limit: int
    offset: int

    @classmethod
    def of(cls, found: shared.Comments) -> PactCommentList:
        return cls(
            comments=[PactComment.of(c) for c in found.items],
            total=found.total,
            limit=found.limit,
            offset=found.offset,
        )
