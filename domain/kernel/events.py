"""Per-resource event streams with gap-free sequence numbers, chained by hash.

A stream's counter row is incremented inside the writer's transaction, so the row lock orders
concurrent writers: a reader paging with `after` never sees a later number commit before an earlier one.

Events are queued on the unit of work's journal and written just before it commits
(domain/kernel/journal.py): the stream's counter reserves the numbers (streams in name order) and answers
the hash of the stream's last event, each event is linked to the one before it (`prev_hash`, PACT §6.4),
then the events are inserted. Every event gets the served record of domain/kernel/event_record.py (PACT
§6.1's fields beside the older ones) without its writer doing anything for it; a writer names what links
its event to others with `correlation_id` (the chain of one thing: a proposal's create, votes and merge all
carry the proposal's id) and `in_response_to` (the event or thing it answers).

Reading is keyset paging on the unique (stream, seq) index: a page after sequence number N seeks to N and
reads `limit` entries, so the page a million events deep costs what the first one costs. A cursor is a
sequence number, written `n` or `evt_n`, the same on both apps and every endpoint that takes one.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import journal
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest
from domain.kernel.event_record import CURSOR_PREFIX, ActorKind, as_stored, served
from domain.kernel.models import Event, EventStream

# Sequence numbers are INTEGER columns; a cursor beyond this is refused before it reaches the database.
MAX_SEQ = 2**31 - 1
CURSOR = re.compile(rf"(?:{CURSOR_PREFIX})?([0-9]{{1,10}})")
# correlation_id and in_response_to columns
MAX_LINK = 80


def stream_of(resource_type: str, resource_id: str) -> str:
    return f"{resource_type}:{resource_id}"


def parse_cursor(value: str | int | None, *, field: str) -> int:
    """The sequence number a cursor names: `n` or `evt_n` (0, or nothing, is the start of the stream).
    Anything else, or a number beyond any sequence number, is a 400 naming `field`."""
    if value is None or value == "":
        return 0
    found = CURSOR.fullmatch(str(value))
    if found is None or int(found[1]) > MAX_SEQ:
        raise BadRequest(
            f"{field} must be an event cursor: a sequence number n or evt_n, at most evt_{MAX_SEQ}",
            field=field,
        )
    return int(found[1])


def _actor_kind(ctx: Context | None, given: ActorKind | None) -> ActorKind:
    """A person is always an Individual; otherwise the kind the writer gives, else what the actor is."""
    actor = ctx.actor if ctx else None
    if actor is not None and actor.kind in ("staff", "person"):
        return ActorKind.INDIVIDUAL
    if given is not None:
        return given
    return ActorKind.SYSTEM if actor is None or actor.kind == "system" else ActorKind.AI_AGENT


def append(
    session: AsyncSession,
    stream: str,
    type_: str,
    ctx: Context | None = None,
    *,
    section_id: str | None = None,
    data: dict[str, Any] | None = None,
    actor_kind: ActorKind | None = None,
    correlation_id: str | None = None,
    in_response_to: str | None = None,
) -> None:
    """Queue an event on the unit of work; it is numbered, chained and written with the commit.

    `correlation_id` links the events of one thing (a proposal's id on all of its events);
    `in_response_to` names what this event answers (an event's `evt_n`, or the id of the thing answered).
    """
    for name, link_value in (("correlation_id", correlation_id), ("in_response_to", in_response_to)):
        if link_value is not None and len(link_value) > MAX_LINK:
            raise ValueError(f"{name} is longer than {MAX_LINK} characters")
    actor = ctx.actor if ctx else None
    journal.of(session).events.append(
        {
            "stream": stream,
            "type": type_,
            "actor_id": actor.id if actor and actor.kind != "system" else None,
            "actor_name": actor.name if actor else "system",
            "actor_kind": str(_actor_kind(ctx, actor_kind)),
            "section_id": section_id,
            "data": as_stored(data),
            "created_at": utcnow(),
            "correlation_id": correlation_id,
            "in_response_to": in_response_to,
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
    correlation_id: str | None = None,
    in_response_to: str | None = None,
) -> int:
    """Append an event and write it (with those queued before it) now; its sequence number."""
    append(
        session,
        stream,
        type_,
        ctx,
        section_id=section_id,
        data=data,
        correlation_id=correlation_id,
        in_response_to=in_response_to,
    )
    return int(await session.run_sync(journal.write_events))


def columns(event: Event) -> dict[str, Any]:
    """The stored columns the served record is built from."""
    return {
        "stream": event.stream,
        "seq": event.seq,
        "type": event.type,
        "actor_id": event.actor_id,
        "actor_name": event.actor_name,
        "actor_kind": event.actor_kind,
        "section_id": event.section_id,
        "data": event.data,
        "created_at": event.created_at,
        "correlation_id": event.correlation_id,
        "in_response_to": event.in_response_to,
        "prev_hash": event.prev_hash,
    }


def to_dict(event: Event) -> dict[str, Any]:
    """The event as both apps serve it (and as its successor's prev_hash hashes it)."""
    return served(columns(event))


@dataclass(frozen=True)
class Page:
    """A page of a stream's events. The events are the served records (event_record.py: hashed as served,
    so they stay dicts); `last_seq` is the last one's sequence number, else the `after` the page started
    from (the next page starts after it)."""

    events: list[dict[str, Any]]
    last_seq: int
    has_more: bool

    @property
    def next_cursor(self) -> str:
        return str(self.last_seq)


async def page(
    session: AsyncSession, stream: str, *, after: int, limit: int, section_id: str | None = None
) -> Page:
    """Up to `limit` events of the stream after sequence number `after`, optionally only one section's.

    The section filter is applied in SQL before the limit, so a page holds `limit` matching events when
    there are that many; the index range still starts at `after`, so it never rescans older events."""
    stmt = select(Event).where(Event.stream == stream, Event.seq > after)
    if section_id is not None:
        stmt = stmt.where(Event.section_id == section_id)
    rows = list((await session.scalars(stmt.order_by(Event.seq).limit(limit + 1))).all())
    has_more = len(rows) > limit
    rows = rows[:limit]
    return Page([to_dict(e) for e in rows], rows[-1].seq if rows else after, has_more)


async def last_numbers(session: AsyncSession, streams: Collection[str]) -> dict[str, int]:
    """Each stream's last sequence number, from its counter (a stream without events is absent)."""
    found: dict[str, int] = {}
    names = sorted(set(streams))
    for start in range(0, len(names), 500):  # bounded IN lists
        rows = await session.execute(
            select(EventStream.stream, EventStream.last_seq).where(
                EventStream.stream.in_(names[start : start + 500])
            )
        )
        found.update({stream: int(last) for stream, last in rows})
    return found


async def count_all(session: AsyncSession, resource_type: str | None = None) -> int:
    """Events of every stream, or only of the streams of one resource type ("topic", "document").

    Read from the streams' counters, not by counting events: sequence numbers are gap-free (a rolled-back
    append rolls its counter back too) and events are never deleted, so a stream's last_seq is its number
    of events, and this reads one row per stream instead of every event."""
    stmt = select(func.coalesce(func.sum(EventStream.last_seq), 0))
    if resource_type is not None:
        stmt = stmt.where(EventStream.stream.startswith(stream_of(resource_type, ""), autoescape=True))
    return int(await session.scalar(stmt) or 0)
