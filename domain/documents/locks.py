"""Section locks on a document: one live lock per section, held by one agent until it releases it, leaves
the document, or the lock's TTL runs out (the scheduler's sweep ends it). Proposals honour them.

Every write locks the document row first, which orders concurrent lockers of one document on PostgreSQL
(SQLite writers are serialised anyway); the (document, section) unique key backs that up."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.documents import library
from domain.documents.access import Caller
from domain.documents.membership import agent_ctx, member, record, require_writer, section
from domain.documents.models import Document, SectionLock
from domain.kernel.clock import iso, new_id, utcnow
from domain.kernel.context import SYSTEM, Context
from domain.kernel.errors import Conflict, Forbidden, NotFound


def lock_view(lock: SectionLock) -> dict[str, Any]:
    return {
        "sectionId": lock.section_id,
        "lockedBy": lock.agent_id,
        "lockedByName": lock.agent_name,
        "ttlSeconds": lock.ttl_seconds,
        "expiresAt": iso(lock.expires_at),
    }


async def live_lock(session: AsyncSession, document_id: str, section_id: str) -> SectionLock | None:
    lock = await session.scalar(
        select(SectionLock).where(
            SectionLock.document_id == document_id, SectionLock.section_id == section_id
        )
    )
    return lock if lock is not None and lock.expires_at > utcnow() else None


def _locked(lock: SectionLock) -> Conflict:
    return Conflict(
        f"section {lock.section_id} is locked by {lock.agent_name}",
        code="section.locked",
        lockedBy=lock.agent_id,
        expiresAt=iso(lock.expires_at),
    )


async def assert_unlocked_for(
    session: AsyncSession, document_id: str, section_id: str, agent_id: str
) -> None:
    """409 when another agent holds a live lock on the section (proposals honour locks)."""
    lock = await live_lock(session, document_id, section_id)
    if lock is not None and lock.agent_id != agent_id:
        raise _locked(lock)


async def lock_section(
    session: AsyncSession, caller: Caller, document_id: str, section_id: str, ttl_seconds: int
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    require_writer(agent, "lock sections")
    await section(doc, section_id)
    now = utcnow()
    lock = await session.scalar(
        select(SectionLock).where(SectionLock.document_id == doc.id, SectionLock.section_id == section_id)
    )
    if lock is not None and lock.expires_at > now and lock.agent_id != agent.id:
        raise _locked(lock)
    if lock is None:
        lock = SectionLock(id=new_id(), document_id=doc.id, section_id=section_id)
        session.add(lock)
    lock.agent_id = agent.id
    lock.agent_name = agent.agent_name
    lock.ttl_seconds = ttl_seconds
    lock.created_at = now
    lock.expires_at = now + timedelta(seconds=ttl_seconds)
    await session.flush()
    view = lock_view(lock)
    await record(
        session,
        agent_ctx(caller, agent),
        doc,
        "pact.section.locked",
        "section.lock",
        section_id=section_id,
        data=view,
    )
    return view


async def unlock_section(
    session: AsyncSession, caller: Caller, document_id: str, section_id: str
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    lock = await live_lock(session, doc.id, section_id)
    if lock is None:
        raise NotFound(f"section {section_id} is not locked", code="lock.not_found")
    if lock.agent_id != agent.id:
        raise Forbidden(
            f"only the holder ({lock.agent_name}) can release this lock",
            code="lock.not_holder",
            lockedBy=lock.agent_id,
        )
    await session.delete(lock)
    await record(
        session,
        agent_ctx(caller, agent),
        doc,
        "pact.section.unlocked",
        "section.unlock",
        section_id=section_id,
        data={"sectionId": section_id, "reason": "released"},
    )
    return {"sectionId": section_id, "unlocked": True}


async def release_all(session: AsyncSession, ctx: Context, doc: Document, agent_id: str, reason: str) -> int:
    """Release every lock the agent holds on the document (it is leaving); the number released."""
    locks = (
        await session.scalars(
            select(SectionLock).where(SectionLock.document_id == doc.id, SectionLock.agent_id == agent_id)
        )
    ).all()
    for lock in locks:
        await session.delete(lock)
        await record(
            session,
            ctx,
            doc,
            "pact.section.unlocked",
            "section.unlock",
            section_id=lock.section_id,
            data={"sectionId": lock.section_id, "reason": reason},
        )
    return len(locks)


async def expire_locks(session: AsyncSession) -> int:
    """Section locks end at their TTL: remove them and tell the document's stream."""
    expired = (
        await session.scalars(select(SectionLock).where(SectionLock.expires_at <= utcnow()).with_for_update())
    ).all()
    for lock in expired:
        doc = await session.get(Document, lock.document_id)
        await session.execute(delete(SectionLock).where(SectionLock.id == lock.id))
        if doc is not None:
            await record(
                session,
                SYSTEM,
                doc,
                "pact.section.unlocked",
                "section.unlock",
                section_id=lock.section_id,
                data={"sectionId": lock.section_id, "reason": "expired", "lockedBy": lock.agent_id},
            )
    return len(expired)
