"""The lifecycle of an intent (PACT v2.0.3 §10.2), for topics and documents alike: declared `proposed`, it
becomes `accepted` when its TTL (`CONCORD_INTENT_TTL_SECONDS`, PACT's default window of 60 s) runs out with
no objection, `objected` as soon as another agent objects to its goal, and `superseded` when its author
declares a newer intent on the same section while it is still proposed or objected.

Acceptance does not wait for anyone: an intent past its TTL with no objection *is* accepted, and every read
says so (`effective_status`), whenever the row catches up. The row and the event `pact.intent.accepted`
(dated by the intent's own deadline) are written by the periodic sweep (`accept_due`), or earlier by the
next intent write on the same resource (`settle`), so that resource's stream never shows a later intent
event before the acceptance that preceded it.

Concurrency: acceptance is a conditional UPDATE (`status = 'proposed' AND expires_at <= now`) and an
objection first locks the intent row and refuses one whose TTL has run out; whichever gets the row first
decides, and the other finds it decided. Objections are one per (intent, agent) by a unique key, so a second
one, even a racing one, is refused.

The shared records module (domain/consensus/records.py) declares, lists and objects through these.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import intent_events
from domain.consensus.models import IntentObjection, SectionIntent
from domain.kernel import audit, events, sqlutil
from domain.kernel.clock import utcnow
from domain.kernel.context import SYSTEM, Context
from domain.kernel.db import table_of

ACCEPTED_EVENT = "pact.intent.accepted"
OBJECTED_EVENT = "pact.intent.objected"
SUPERSEDED_EVENT = "pact.intent.superseded"
SWEEP_BATCH = 500

_INTENTS = table_of(SectionIntent)


class IntentStatus(StrEnum):
    """Where an intent stands (PACT §10.2)."""

    PROPOSED = "proposed"  # declared; others may object until its TTL runs out
    ACCEPTED = "accepted"  # its TTL ran out with no objection
    OBJECTED = "objected"  # another agent objected to its goal
    SUPERSEDED = "superseded"  # its author declared a newer intent on the section


# An author's newer intent on a section replaces these of its own (not an accepted one: that one is done).
SUPERSEDABLE = (IntentStatus.PROPOSED.value, IntentStatus.OBJECTED.value)


@dataclass(frozen=True)
class Objection:
    agent_id: str
    agent_name: str
    reason: str
    created_at: datetime


def effective_status(row: SectionIntent, now: datetime) -> IntentStatus:
    """The intent's status as of `now`: a proposed intent whose TTL has run out is accepted, whether or not
    the sweep has written it yet."""
    status = IntentStatus(row.status)
    if status is IntentStatus.PROPOSED and row.expires_at is not None and row.expires_at <= now:
        return IntentStatus.ACCEPTED
    return status


async def accept_due(session: AsyncSession) -> int:
    """Sweep: accept every proposed intent whose TTL has run out (at most SWEEP_BATCH a run, oldest
    deadline first); each is `pact.intent.accepted` on its resource's stream. The rows accepted."""
    return await _accept(session, ())


async def settle(session: AsyncSession, resource_type: str, resource_id: str) -> int:
    """Accept the resource's intents whose TTL has run out, before another intent write on it (the resource
    is locked by the caller)."""
    return await _accept(
        session, (_INTENTS.c.resource_type == resource_type, _INTENTS.c.resource_id == resource_id)
    )


async def _accept(session: AsyncSession, where: tuple[Any, ...]) -> int:
    now = utcnow()
    t = _INTENTS
    due = (t.c.status == IntentStatus.PROPOSED.value, t.c.expires_at <= now)
    batch = select(t.c.id).where(*due, *where).order_by(t.c.expires_at, t.c.id).limit(SWEEP_BATCH)
    accepted = (
        await session.execute(
            update(t)
            .where(t.c.id.in_(batch.scalar_subquery()), *due)  # checked again on the locked row
            .values(status=IntentStatus.ACCEPTED.value, resolved_at=t.c.expires_at)
            .returning(
                t.c.id,
                t.c.resource_type,
                t.c.resource_id,
                t.c.section_id,
                t.c.agent_id,
                t.c.agent_name,
                t.c.expires_at,
            )
        )
    ).all()
    for intent_id, resource_type, resource_id, section_id, agent_id, agent_name, expires_at in sorted(
        accepted, key=lambda r: (r.expires_at, r.id)
    ):
        events.append(
            session,
            events.stream_of(resource_type, resource_id),
            ACCEPTED_EVENT,
            SYSTEM,
            section_id=section_id,
            correlation_id=intent_id,
            data=intent_events.accepted(intent_id, section_id, agent_id, agent_name, expires_at),
        )
    return len(accepted)


async def supersede(
    session: AsyncSession, ctx: Context, resource_type: str, resource_id: str, newer: SectionIntent
) -> list[str]:
    """The author's proposed or objected intents on `newer`'s section, other than `newer`, become
    superseded by it (the resource is locked and its due intents settled by the caller)."""
    t = _INTENTS
    now = utcnow()
    replaced = (
        await session.scalars(
            update(t)
            .where(
                t.c.resource_type == resource_type,
                t.c.resource_id == resource_id,
                t.c.section_id == newer.section_id,
                t.c.agent_id == newer.agent_id,
                t.c.id != newer.id,
                t.c.status.in_(SUPERSEDABLE),
            )
            .values(status=IntentStatus.SUPERSEDED.value, resolved_at=now)
            .returning(t.c.id)
        )
    ).all()
    for intent_id in sorted(replaced):
        data = intent_events.superseded(intent_id, newer.section_id, newer.id)
        events.append(
            session,
            events.stream_of(resource_type, resource_id),
            SUPERSEDED_EVENT,
            ctx,
            section_id=newer.section_id,
            correlation_id=intent_id,
            data=data,
        )
        audit.record(session, ctx, "intent.supersede", "intent", intent_id, after=data)
    return list(replaced)


async def add_objection(
    session: AsyncSession, intent: SectionIntent, agent_id: str, agent_name: str, reason: str, at: datetime
) -> bool:
    """Record one agent's objection (False if it objected to this intent already); the unique key refuses a
    second one even from a racing request."""
    added = await session.scalar(
        sqlutil.insert(session, IntentObjection)
        .values(intent_id=intent.id, agent_id=agent_id, agent_name=agent_name, reason=reason, created_at=at)
        .on_conflict_do_nothing()
        .returning(IntentObjection.id)
    )
    return added is not None


async def objections_of(session: AsyncSession, intent_ids: Collection[str]) -> dict[str, list[Objection]]:
    """The objections to each of the intents, oldest first."""
    found: dict[str, list[Objection]] = defaultdict(list)
    ids = sorted(set(intent_ids))
    for start in range(0, len(ids), 500):  # bounded IN lists
        rows = await session.scalars(
            select(IntentObjection)
            .where(IntentObjection.intent_id.in_(ids[start : start + 500]))
            .order_by(IntentObjection.id)
        )
        for o in rows:
            found[o.intent_id].append(Objection(o.agent_id, o.agent_name, o.reason, o.created_at))
    return found
