"""Models of the share-link API: what a token's holder reads and sends, and the owner's list."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from domain.documents import sharing
from domain.documents.models import ShareLink as ShareLinkRow
from domain.kernel.clock import iso
from domain.review.escalations import Decision, DecisionField
from web.docs.schemas import EMAIL, CommentOut, Model, Out, Proposal, Section, ShareLink, ShareLinkLookup
from web.kernel.wire import Rule, Text, Timestamp

CODE = Rule(r"^[0-9]{6}$", "must be the 6 digits from the mail")


class ShareLinkInfo(ShareLink):
    createdAt: Timestamp
    revokedAt: Timestamp | None
    state: Literal["active", "expired", "revoked"]

    @staticmethod
    def answer(link: ShareLinkRow) -> dict[str, Any]:
        """What the owner organisation sees of a link (never the token: only its hash is kept)."""
        return {
            **ShareLink.terms(link),
            "createdAt": iso(link.created_at),
            "revokedAt": iso(link.revoked_at),
            "state": sharing.state(link),
        }


class ShareLinkList(Out):
    documentId: str
    data: list[ShareLinkInfo] = Field(description="Oldest first, revoked and expired ones included")

    @staticmethod
    def answer(found: sharing.Links) -> dict[str, Any]:
        return {"documentId": found.document_id, "data": [ShareLinkInfo.answer(link) for link in found.links]}


class SharedDocument(Out):
    id: str
    title: str
    status: Literal["processing", "ready", "failed"]
    version: int
    updatedAt: Timestamp
    content: str = Field(description="Markdown (empty until the document is ready)")

    @classmethod
    def of(cls, view: sharing.SharedView) -> SharedDocument:
        doc = view.doc
        return cls.model_validate(
            {
                "id": doc.id,
                "title": doc.title,
                "status": doc.status,
                "version": doc.version,
                "updatedAt": iso(doc.updated_at),
                "content": view.content,
            }
        )


class ShareView(Out):
    link: ShareLinkLookup
    reviewer: str | None = Field(description="The proven address (closed links), else null")
    document: SharedDocument
    sections: list[Section]
    comments: list[CommentOut] = Field(description="Oldest first")
    proposals: list[Proposal] = Field(description="Objected proposals to decide (FullReview links only)")

    @staticmethod
    def answer(view: sharing.SharedView) -> dict[str, Any]:
        """The view as this model describes it. A dict: a model instance would add the sections' unset
        defaults (a section's parentId, which only a paged read has) to the answer; the operation checks it
        against this model all the same."""
        return {
            "link": ShareLinkLookup.answer(view.link, view.doc),
            "reviewer": view.reviewer,
            "document": SharedDocument.of(view).model_dump(mode="json"),
            "sections": [Section.node(s) for s in view.sections],
            "comments": [CommentOut.of(c).model_dump(mode="json") for c in view.comments],
            "proposals": [Proposal.of(p).model_dump(mode="json") for p in view.proposals],
        }


class ShareCommentBody(Model):
    text: Text = Field(min_length=1, max_length=10_000)
    paragraphId: str | None = Field(default=None, max_length=256, description="A section id (sec:…)")
    author: str | None = Field(
        default=None, max_length=200, description="Display name; default: the proven address or 'Reviewer'."
    )


class ShareDecisionBody(Model):
    decision: DecisionField
    note: Text = Field(min_length=1, max_length=4000)


class ShareDecision(Proposal):
    decision: DecisionField
    note: str

    @classmethod
    def of_decision(cls, decided: sharing.Decided) -> ShareDecision:
        return cls(
            **Proposal.of(decided.proposal).model_dump(),
            decision=Decision(decided.decision),
            note=decided.note,
        )


class VerificationBody(Model):
    email: Annotated[str, EMAIL] = Field(max_length=254)


class VerificationSent(Out):
    email: str
    detail: str = Field(description="The same words whether or not the address may review")
    expiresInSeconds: int


class ConfirmBody(Model):
    email: Annotated[str, EMAIL] = Field(max_length=254)
    code: Annotated[str, CODE] = Field(description="The 6 digits from the mail.")


class ShareSession(Out):
    email: str
    expiresAt: Timestamp
    cookie: str = Field(
        description="Name of the session cookie set on this response (HttpOnly, SameSite=Lax)"
    )
