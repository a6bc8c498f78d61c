"""Agents' comments on the sections of a topic or a document (PACT v2.0.3 §4.3 `comment.add`, §7.1
`POST /api/pact/{id}/comments`), one implementation for both resources, as the records are.

Each resource keeps its comments where it always did: a document in its comment table (people, keys and
share-link reviewers comment there too, and a comment made here shows in the comment search and on the
review page), a topic in its own. The resource plugs in through a `Target` (its row lock and its Markdown,
as for the records) and a `Store` (its rows, and the data its `pact.comment.added` events carry); the area
decides who may comment (a joined agent) before calling in.

`comment.resolve` is served by no path of §7.1 (its `/resolve` is a person's resolution of an escalation), so
nothing here resolves; documents keep `PUT /api/comments/{id}/resolve` and the review page's form.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, TypeVar

from sqlalchemy import ColumnExpressionArgument, Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import sections
from domain.consensus.records import Scope, Target
from domain.kernel import audit, events
from domain.kernel.context import Actor, Context
from domain.kernel.errors import NotFound

ADDED = "pact.comment.added"
_Row = TypeVar("_Row")
CONTENT_MAX = 10_000


@dataclass(frozen=True)
class Comment:
    id: str
    resource_type: str
    resource_id: str
    section_id: str | None  # None: on the resource as a whole
    content: str
    agent_id: str | None  # the agent that wrote it here; None for a person's or a key's comment on a document
    author: str  # the name it is shown with
    created_at: datetime
    resolved: bool
    resolved_at: datetime | None


@dataclass(frozen=True)
class Comments:
    """A page of a resource's comments, oldest first: `items` from `offset` on, of `total`."""

    resource_type: str
    resource_id: str
    items: list[Comment]
    total: int
    limit: int
    offset: int


@dataclass(frozen=True)
class Page:
    items: list[Comment]
    total: int


class Store(Protocol):
    """Where one resource keeps its comments."""

    async def insert(
        self, session: AsyncSession, actor: Actor, *, section_id: str | None, content: str
    ) -> tuple[Comment, dict[str, Any]]:
        """Write a comment by `actor`; the comment and the data of its event."""
        ...

    async def listed(self, session: AsyncSession, *, section_id: str | None, limit: int, offset: int) -> Page:
        """A page of the resource's comments (of one section when given), oldest first, and their total."""
        ...


async def add(
    session: AsyncSession,
    ctx: Context,
    target: Target,
    store: Store,
    *,
    section_id: str | None,
    content: str,
    section_not_found: str,
) -> Comment:
    """Comment as the acting agent, on a section of the resource's current Markdown (404 with
    `section_not_found` when it has none of that id) or, without one, on the resource as a whole."""
    actor = ctx.require_actor()
    await target.lock(session)
    if section_id is not None:
        markdown, _version = await target.read(session)
        if sections.find(markdown, section_id) is None:
            raise NotFound(
                f"section {section_id} does not exist on this {target.resource_type}; re-read the sections",
                code=section_not_found,
                field="sectionId",
            )
    comment, data = await store.insert(session, actor, section_id=section_id, content=content)
    events.append(
        session,
        events.stream_of(target.resource_type, target.resource_id),
        ADDED,
        ctx,
        section_id=section_id,
        data=data,
    )
    audit.record(session, ctx, "comment.create", "comment", comment.id, after=data)
    return comment


async def listed(
    session: AsyncSession, scope: Scope, store: Store, *, section_id: str | None, limit: int, offset: int
) -> Comments:
    found = await store.listed(session, section_id=section_id, limit=limit, offset=offset)
    return Comments(scope.resource_type, scope.resource_id, found.items, found.total, limit, offset)


async def paged(
    session: AsyncSession,
    stmt: Select[_Row],
    order: Sequence[ColumnExpressionArgument[Any]],
    shown: Callable[[_Row], Comment],
    *,
    limit: int,
    offset: int,
) -> Page:
    """One page of a store's filtered statement, in `order`, and the count of all it selects."""
    total = await session.scalar(select(func.count()).select_from(stmt.order_by(None).subquery()))
    rows = await session.scalars(stmt.order_by(*order).limit(limit).offset(offset))
    return Page([shown(r) for r in rows.all()], int(total or 0))
