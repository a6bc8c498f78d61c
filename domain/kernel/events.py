"""Per-resource event streams with gap-free sequence numbers.

A stream's counter row is incremented inside the writer's transaction, so the row lock orders
concurrent writers: a reader paging with `after` never sees a later number commit before an earlier one.

Events are queued on the unit of work's journal and written just before it commits
(domain/kernel/journal.py): the stream's counter reserves the numbers (streams in name order), then the
events are inserted.

Reading is keyset paging on the unique (stream, seq) index: a page after sequence number N seeks to N and
reads `limit` entries, so the page a million events deep costs what the first one costs.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import journal
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import Context
from domain.kernel.models import Event, EventStream

# Sequence numbers are INTEGER columns; a cursor beyond this is refused before it reaches the database.
MAX_SEQ = 2**31 - 1


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
) -> None:
    """Queue an event on the unit of work; it is numbered and written with the commit."""
    actor = ctx.actor if ctx else None
    kind = actor_kind or ("System" if actor is None or actor.kind == "system" else "AiAgent")
    if actor is not None and actor.kind in ("staff", "person"):
        kind = "Individual"
    journal.of(session).events.append(
        {
            "stream": stream,
            "type": type_,
            "actor_id": actor.id if actor and actor.kind != "system" else None,
            "actor_name": actor.name if actor else "system",
            "actor_kind": kind,
            "section_id": section_id,
            "data": data or {},
            "created_at": utcnow(),
        }
    )


async def append_numbered(
    session: AsyncSession,
    stream: str,
    type_: str,
    ctx: Context | None = None,
    *,
    section_id: str | None = None,
    data: dict[str, Any] | None = None,
) -> int:
    """Append an event and write it (with those queued before it) now; its sequence number."""
    await append(session, stream, type_, ctx, section_id=section_id, data=data)
    return int(await session.run_sync(journal.write_events))


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


async def page(
    session: AsyncSession, stream: str, *, after: int, limit: int, section_id: str | None = None
) -> dict[str, Any]:
    """Up to `limit` events of the stream after sequence number `after`, optionally only one section's.

    The section filter is applied in SQL before the limit, so a page holds `limit` matching events when
    there are that many; the index range still starts at `after`, so it never rescans older events."""
    stmt = select(Event).where(Event.stream == stream, Event.seq > after)
    if section_id is not None:
        stmt = stmt.where(Event.section_id == section_id)
    rows = list((await session.scalars(stmt.order_by(Event.seq).limit(limit + 1))).all())
    has_more = len(rows) > limit
    rows = rows[:limit]
    return {
        "events": [to_dict(e) for e in rows],
        "nextCursor": str(rows[-1].seq) if rows else str(after),
        "hasMore": has_more,
    }


async def count_all(session: AsyncSession, resource_type: str | None = None) -> int:
    """Events of every stream, or only of the streams of one resource type ("topic", "document").

    Read from the streams' counters, not by counting events: sequence numbers are gap-free (a rolled-back
    append rolls its counter back too) and events are never deleted, so a stream's last_seq is its number
    of events, and this reads one row per stream instead of every event."""
    stmt = select(func.coalesce(func.sum(EventStream.last_seq), 0))
    if resource_type is not None:
        stmt = stmt.where(EventStream.stream.startswith(stream_of(resource_type, ""), autoescape=True))
    return int(await session.scalar(stmt) or 0)
