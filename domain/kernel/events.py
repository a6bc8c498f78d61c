"""Per-resource event streams with gap-free sequence numbers.

A stream's counter row is incremented inside the writer's transaction, so the row lock orders
concurrent writers: a reader paging with `after` never sees a later number commit before an earlier one.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel.clock import iso, utcnow
from domain.kernel.context import Context
from domain.kernel.models import Event, EventStream
from domain.kernel.sqlutil import insert_ignore


def stream_of(resource_type: str, resource_id: str) -> str:
    return f"{resource_type}:{resource_id}"


async def append(
    session: AsyncSession,
    stream: str,
    type_: str,
    ctx: Context | None = None,
    *,
    section_id: str | None = None,
    data: dict[str, Any] | None = None,
    actor_kind: str | None = None,
) -> Event:
    await insert_ignore(session, EventStream, {"stream": stream, "last_seq": 0})
    seq = (
        await session.execute(
            update(EventStream)
            .where(EventStream.stream == stream)
            .values(last_seq=EventStream.last_seq + 1)
            .returning(EventStream.last_seq)
        )
    ).scalar_one()
    actor = ctx.actor if ctx else None
    kind = actor_kind or ("System" if actor is None or actor.kind == "system" else "AiAgent")
    if actor is not None and actor.kind in ("staff", "person"):
        kind = "Individual"
    event = Event(
        stream=stream,
        seq=seq,
        type=type_,
        actor_id=actor.id if actor and actor.kind != "system" else None,
        actor_name=actor.name if actor else "system",
        actor_kind=kind,
        section_id=section_id,
        data=data or {},
        created_at=utcnow(),
    )
    session.add(event)
    return event


def to_dict(event: Event) -> dict[str, Any]:
    return {
        "id": event.seq,
        "sequenceNumber": event.seq,
        "type": event.type,
        "agentId": event.actor_id,
        "agentName": event.actor_name,
        "actorKind": event.actor_kind,
        "sectionId": event.section_id,
        "data": event.data,
        "createdAt": iso(event.created_at),
    }


async def page(session: AsyncSession, stream: str, *, after: int, limit: int) -> dict[str, Any]:
    rows = list(
        (
            await session.scalars(
                select(Event)
                .where(Event.stream == stream, Event.seq > after)
                .order_by(Event.seq)
                .limit(limit + 1)
            )
        ).all()
    )
    has_more = len(rows) > limit
    rows = rows[:limit]
    return {
        "events": [to_dict(e) for e in rows],
        "nextCursor": str(rows[-1].seq) if rows else str(after),
        "hasMore": has_more,
    }


async def count_all(session: AsyncSession, resource_type: str | None = None) -> int:
    """Events of every stream, or only of the streams of one resource type ("topic", "document")."""
    stmt = select(func.count(Event.id))
    if resource_type is not None:
        stmt = stmt.where(Event.stream.like(stream_of(resource_type, "%")))
    return int(await session.scalar(stmt) or 0)
