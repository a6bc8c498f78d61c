"""Comments on documents: create, search, resolve (by the document's owner or the comment's author); and
agents' comments on the PACT path (`POST /api/pact/{docId}/comments`), through the shared comments
(domain/consensus/comments.py) into the same table, so they show in the search and on the review page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import comments as shared
from domain.consensus import sections
from domain.documents import comment_events, library, offload
from domain.documents.access import Caller
from domain.documents.membership import agent_ctx, member
from domain.documents.models import Comment, Document, DocumentStatus
from domain.documents.proposals import DocumentResource
from domain.kernel import audit, events
from domain.kernel.clock import utcnow
from domain.kernel.context import Actor
from domain.kernel.errors import Forbidden, NotFound, Unprocessable
from domain.kernel.ids import new_id


@dataclass(frozen=True)
class CommentPage:
    """One page of a comment search, oldest first, with the total the filters match."""

    rows: list[Comment]
    total: int
    page: int
    page_size: int


async def create(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    *,
    text: str,
    paragraph_id: str | None = None,
    author: str | None = None,
) -> Comment:
    """A comment on the caller's document, on a section (`paragraph_id` sec:…) or anywhere; by `author`, or
    the caller's name."""
    doc = await library.get(session, caller, document_id)
    paragraph = paragraph_id
    if paragraph and paragraph.startswith("sec:") and doc.status == DocumentStatus.READY:
        await offload.outline(doc.content or "")
        if sections.find(doc.content or "", paragraph) is None:
            raise Unprocessable(
                f"paragraphId {paragraph} is not a section of the document", field="paragraphId"
            )
    comment = await _insert(
        session,
        doc,
        caller,
        text=text,
        author=author or caller.name,
        paragraph_id=paragraph,
        agent_id=None,
    )
    data = comment_events.comment(comment)
    events.append(
        session, library.stream(doc.id), "pact.comment.added", caller.ctx, section_id=paragraph, data=data
    )
    audit.record(session, caller.ctx, "comment.create", "comment", comment.id, after=data)
    return comment


async def _insert(
    session: AsyncSession,
    doc: Document,
    caller: Caller,
    *,
    text: str,
    author: str,
    paragraph_id: str | None,
    agent_id: str | None,
) -> Comment:
    comment = Comment(
        id=new_id(),
        document_id=doc.id,
        org_id=doc.org_id,
        text=text,
        author=author[:200],
        author_key_id=caller.key_id,
        paragraph_id=paragraph_id,
        agent_id=agent_id,
        resolved=False,
        created_at=utcnow(),
    )
    session.add(comment)
    await session.flush()
    return comment


class DocumentComments:
    """The shared comments' store of one document: its comment table. An agent's comment is by the agent's
    name, from its key (which, as any comment's author, may resolve it), with its section as paragraphId;
    its event carries the same data as every other comment of the document."""

    def __init__(self, doc: Document, caller: Caller) -> None:
        self.doc = doc
        self.caller = caller

    async def insert(
        self, session: AsyncSession, actor: Actor, *, section_id: str | None, content: str
    ) -> tuple[shared.Comment, dict[str, Any]]:
        row = await _insert(
            session,
            self.doc,
            self.caller,
            text=content,
            author=actor.name,
            paragraph_id=section_id,
            agent_id=actor.id,
        )
        return _shared(row), comment_events.comment(row)

    async def listed(
        self, session: AsyncSession, *, section_id: str | None, limit: int, offset: int
    ) -> shared.Page:
        stmt = select(Comment).where(Comment.document_id == self.doc.id)
        if section_id is not None:
            stmt = stmt.where(Comment.paragraph_id == section_id)
        order = (Comment.created_at, Comment.id)
        return await shared.paged(session, stmt, order, _shared, limit=limit, offset=offset)


def _shared(c: Comment) -> shared.Comment:
    return shared.Comment(
        id=c.id,
        resource_type="document",
        resource_id=c.document_id,
        section_id=c.paragraph_id,
        content=c.text,
        agent_id=c.agent_id,
        author=c.author,
        created_at=c.created_at,
        resolved=c.resolved,
        resolved_at=c.resolved_at,
    )


async def add_as_agent(
    session: AsyncSession, caller: Caller, document_id: str, *, section_id: str | None, content: str
) -> shared.Comment:
    """A joined agent's comment (any role: observers comment too), on a section of the converted document
    (404 if it has none of that id, 409 while converting) or on the document as a whole."""
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    return await shared.add(
        session,
        agent_ctx(caller, agent),
        DocumentResource(doc, locked=True),
        DocumentComments(doc, caller),
        section_id=section_id,
        content=content,
        section_not_found="section.not_found",
    )


async def list_on(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    *,
    section_id: str | None,
    limit: int,
    offset: int,
) -> shared.Comments:
    """A page of the document's comments (people's, keys' and agents'), oldest first, or of one section's."""
    doc = await library.get(session, caller, document_id)
    return await shared.listed(
        session,
        DocumentResource(doc),
        DocumentComments(doc, caller),
        section_id=section_id,
        limit=limit,
        offset=offset,
    )


async def search(
    session: AsyncSession,
    caller: Caller,
    *,
    document_id: str | None,
    resolved: bool | None,
    author: str | None,
    page: int,
    page_size: int,
) -> CommentPage:
    stmt = select(Comment).where(Comment.org_id == caller.org_id)
    if document_id:
        await library.get(session, caller, document_id)
        stmt = stmt.where(Comment.document_id == document_id)
    if resolved is not None:
        stmt = stmt.where(Comment.resolved.is_(resolved))
    if author:
        stmt = stmt.where(Comment.author == author)
    total = int(await session.scalar(select(func.count()).select_from(stmt.subquery())) or 0)
    rows = (
        await session.scalars(
            stmt.order_by(Comment.created_at, Comment.id).offset((page - 1) * page_size).limit(page_size)
        )
    ).all()
    return CommentPage(list(rows), total, page, page_size)


async def resolve(session: AsyncSession, caller: Caller, comment_id: str) -> Comment:
    comment = (
        await session.scalar(select(Comment).where(Comment.id == comment_id).with_for_update())
        if 0 < len(comment_id) <= 36
        else None
    )
    if comment is None or comment.org_id != caller.org_id:
        raise NotFound(f"comment {comment_id} not found", code="comment_not_found")
    doc = await session.get(Document, comment.document_id)
    if caller.key_id not in (comment.author_key_id, doc.owner_key_id if doc else None):
        raise Forbidden(
            "only the document's owner or the comment's author may resolve it", code="not_owner_or_author"
        )
    return await _resolve(session, caller, comment)


async def resolve_on(session: AsyncSession, caller: Caller, document_id: str, comment_id: str) -> Comment:
    """Resolve a comment of one document for a caller the document's share link admits (FullReview)."""
    comment = (
        await session.scalar(
            select(Comment)
            .where(Comment.id == comment_id, Comment.document_id == document_id)
            .with_for_update()
        )
        if 0 < len(comment_id) <= 36
        else None
    )
    if comment is None:
        raise NotFound(f"comment {comment_id} not found on this document", code="comment_not_found")
    return await _resolve(session, caller, comment)


async def _resolve(session: AsyncSession, caller: Caller, comment: Comment) -> Comment:
    before = comment_events.comment(comment)
    if not comment.resolved:
        comment.resolved = True
        comment.resolved_at = utcnow()
        comment.resolved_by = caller.key_id
        events.append(
            session,
            library.stream(comment.document_id),
            "pact.comment.resolved",
            caller.ctx,
            section_id=comment.paragraph_id,
            data=comment_events.resolved(comment),
        )
    after = comment_events.comment(comment)
    audit.record(session, caller.ctx, "comment.resolve", "comment", comment.id, before=before, after=after)
    return comment
