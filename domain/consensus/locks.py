"""Section locks on a topic or a document: one implementation for both, as the consensus engine and the
section records are. The resource plugs in as the records' `Target` (its type and id, its row lock, its
Markdown); `Rules` carry what its spec fixes (the longest TTL and the error codes). The area decides who may
lock (a topic's participants, a document's members with a writing role); the caller's Context names the
agent.

The rules (PACT v2.0.3 §4.3 `section.lock`/`section.unlock`, spec/document-api.md "Section locking"):
- one live lock per section, held by one agent; locking again renews the holder's own lock with the new
  TTL; another agent's lock gives 409 naming its holder and expiry;
- only the holder releases it (403 for another agent, 404 when the section is not locked);
- a lock ends when its holder releases it, when its holder leaves the resource (`release_all`), or at its
  TTL: past `expires_at` it is no lock at once (every read compares with the clock) and the resource
  type's sweep (`expire_due`) deletes the row and records the event;
- while a section is locked, other agents' proposals on it are refused with 409 (`assert_unlocked_for`).
Each change records `pact.section.locked` or `pact.section.unlocked` (reason released, left or expired) on the
resource's event stream, with an audit entry.

Concurrency: every write locks the resource row first (`Target.lock`, as the engine does), so two agents
locking one section are ordered on PostgreSQL and exactly one holds it (SQLite's writers are serialised
anyway); the (resource, section) unique key backs that up. A lock row is read FOR UPDATE before it is
changed, so a renewal, a release or a leave and the expiry sweep (which locks the rows it deletes) wait for
each other: the sweep re-reads a row renewed meanwhile and passes it over, and a renewal or release after
the sweep finds no row.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import record_events, sections
from domain.consensus.models import SectionLock
from domain.consensus.records import Scope, Target
from domain.kernel import audit, events
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import SYSTEM, Context
from domain.kernel.errors import BadRequest, Conflict, Forbidden, NotFound
from domain.kernel.ids import new_id
from domain.kernel.sqlutil import for_update

LOCKED = "pact.section.locked"
UNLOCKED = "pact.section.unlocked"


class UnlockReason(StrEnum):
    """Why a lock ended (the `reason` of its `pact.section.unlocked` event)."""

    RELEASED = "released"  # its holder unlocked it
    LEFT = "left"  # its holder left the resource
    EXPIRED = "expired"  # its TTL ran out


@dataclass(frozen=True)
class Rules:
    """What a resource type's spec fixes: the longest TTL a lock may ask for and the error codes."""

    max_ttl_seconds: int
    section_not_found: str
    section_locked: str
    not_locked: str
    not_holder: str


@dataclass(frozen=True)
class Lock:
    """A live lock, as just taken or renewed."""

    resource_type: str
    resource_id: str
    section_id: str
    agent_id: str
    agent_name: str
    ttl_seconds: int
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class Unlocked:
    resource_type: str
    resource_id: str
    section_id: str


@dataclass(frozen=True)
class Ref:
    """A resource named by its type and id (a `Scope` for the reads and releases that need no more)."""

    resource_type: str
    resource_id: str


# ---- reads -----------------------------------------------------------------------------------------


# A section's lock row, found by the resource and the section (`_key`): built once, run with parameters.
_LOCK_OF_SECTION = select(SectionLock).where(
    SectionLock.resource_type == bindparam("l_type"),
    SectionLock.resource_id == bindparam("l_resource"),
    SectionLock.section_id == bindparam("l_section"),
)
_LOCK_OF_SECTION_FOR_UPDATE = for_update(_LOCK_OF_SECTION)


def _key(scope: Scope, section_id: str) -> dict[str, str]:
    return {"l_type": scope.resource_type, "l_resource": scope.resource_id, "l_section": section_id}


def live(row: SectionLock | None) -> SectionLock | None:
    """The row if it still holds: a lock past its expiry is no lock, whether or not the sweep removed it."""
    return row if row is not None and row.expires_at > utcnow() else None


async def live_lock(session: AsyncSession, scope: Scope, section_id: str) -> SectionLock | None:
    return live(await session.scalar(_LOCK_OF_SECTION, _key(scope, section_id)))


def _refuse_if_held(rules: Rules, row: SectionLock | None, agent_id: str) -> None:
    """409 when another agent holds a live lock on the section (`row`: its lock row, if any)."""
    held = live(row)
    if held is not None and held.agent_id != agent_id:
        raise _locked(rules, held)


async def assert_unlocked_for(
    session: AsyncSession, scope: Scope, rules: Rules, section_id: str, agent_id: str
) -> None:
    """409 when another agent holds a live lock on the section (proposals honour locks). The caller holds
    the resource's row lock, which every lock write takes first, and calls this in a statement after the one
    that took it: on PostgreSQL a row read by the statement that waited for the lock is the row as it was
    before the wait, so a lock committed meanwhile would go unseen."""
    _refuse_if_held(rules, await live_lock(session, scope, section_id), agent_id)


def _locked(rules: Rules, row: SectionLock) -> Conflict:
    return Conflict(
        f"section {row.section_id} is locked by {row.agent_name}",
        code=rules.section_locked,
        lockedBy=row.agent_id,
        expiresAt=iso(row.expires_at),
    )


# ---- writes ----------------------------------------------------------------------------------------


async def lock_section(
    session: AsyncSession, ctx: Context, target: Target, rules: Rules, *, section_id: str, ttl_seconds: int
) -> Lock:
    """Lock the section for the acting agent, or renew its own lock, for `ttl_seconds` from now."""
    actor = ctx.require_actor()
    if isinstance(ttl_seconds, bool) or not 1 <= ttl_seconds <= rules.max_ttl_seconds:
        raise BadRequest(
            f"ttlSeconds must be an integer from 1 to {rules.max_ttl_seconds}", field="ttlSeconds"
        )
    await target.lock(session)
    markdown, _version = await target.read(session)
    if sections.find(markdown, section_id) is None:
        raise NotFound(
            f"section {section_id} does not exist on this {target.resource_type}; re-read the sections",
            code=rules.section_not_found,
            field="sectionId",
        )
    row = await session.scalar(_LOCK_OF_SECTION_FOR_UPDATE, _key(target, section_id))
    _refuse_if_held(rules, row, actor.id)
    now = utcnow()
    if row is None:
        row = SectionLock(
            id=new_id(),
            resource_type=target.resource_type,
            resource_id=target.resource_id,
            section_id=section_id,
        )
        session.add(row)
    row.agent_id = actor.id
    row.agent_name = actor.name
    row.ttl_seconds = ttl_seconds
    row.created_at = now
    row.expires_at = now + timedelta(seconds=ttl_seconds)
    await session.flush()
    lock = _lock(row)
    data = record_events.section_locked(row)
    await _record(session, ctx, target, LOCKED, "section.lock", section_id, data)
    return lock


async def unlock_section(
    session: AsyncSession, ctx: Context, target: Target, rules: Rules, *, section_id: str
) -> Unlocked:
    """Release the acting agent's lock on the section."""
    actor = ctx.require_actor()
    await target.lock(session)
    row = live(await session.scalar(_LOCK_OF_SECTION_FOR_UPDATE, _key(target, section_id)))
    if row is None:
        raise NotFound(f"section {section_id} is not locked", code=rules.not_locked)
    if row.agent_id != actor.id:
        raise Forbidden(
            f"only the holder ({row.agent_name}) can release this lock",
            code=rules.not_holder,
            lockedBy=row.agent_id,
        )
    await session.delete(row)
    await _record_unlocked(session, ctx, target, section_id, UnlockReason.RELEASED)
    return Unlocked(target.resource_type, target.resource_id, section_id)


async def release_all(
    session: AsyncSession, ctx: Context, scope: Scope, agent_id: str, reason: UnlockReason
) -> int:
    """Release every lock the agent holds on the resource (it is leaving); the number released. The caller
    holds the resource's row lock."""
    rows = (
        await session.scalars(
            for_update(
                select(SectionLock)
                .where(
                    SectionLock.resource_type == scope.resource_type,
                    SectionLock.resource_id == scope.resource_id,
                    SectionLock.agent_id == agent_id,
                )
                .order_by(SectionLock.section_id)
            )
        )
    ).all()
    for row in rows:
        await session.delete(row)
        await _record_unlocked(session, ctx, scope, row.section_id, reason)
    return len(rows)


async def expire_due(session: AsyncSession, resource_type: str) -> int:
    """The sweep of one resource type: delete its locks whose TTL ran out and tell each resource's stream;
    the number ended."""
    rows = (
        await session.scalars(
            for_update(
                select(SectionLock)
                .where(SectionLock.resource_type == resource_type, SectionLock.expires_at <= utcnow())
                .order_by(SectionLock.id)
            )
        )
    ).all()
    for row in rows:
        await session.delete(row)
        scope = Ref(row.resource_type, row.resource_id)
        await _record_unlocked(session, SYSTEM, scope, row.section_id, UnlockReason.EXPIRED, row.agent_id)
    return len(rows)


async def _record_unlocked(
    session: AsyncSession,
    ctx: Context,
    scope: Scope,
    section_id: str,
    reason: UnlockReason,
    holder: str | None = None,
) -> None:
    """`pact.section.unlocked`; an expired lock's event also names its holder (the system ended it)."""
    data = record_events.section_unlocked(section_id, reason.value, holder)
    await _record(session, ctx, scope, UNLOCKED, "section.unlock", section_id, data)


async def _record(
    session: AsyncSession,
    ctx: Context,
    scope: Scope,
    event: str,
    op: str,
    section_id: str,
    data: dict[str, Any],
) -> None:
    events.append(
        session,
        events.stream_of(scope.resource_type, scope.resource_id),
        event,
        ctx,
        section_id=section_id,
        data=data,
    )
    audit.record(session, ctx, op, scope.resource_type, scope.resource_id, after=data)


def _lock(row: SectionLock) -> Lock:
    return Lock(
        resource_type=row.resource_type,
        resource_id=row.resource_id,
        section_id=row.section_id,
        agent_id=row.agent_id,
        agent_name=row.agent_name,
        ttl_seconds=row.ttl_seconds,
        created_at=row.created_at,
        expires_at=row.expires_at,
    )
