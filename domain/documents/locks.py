"""Section locks on a document, through the shared locks (domain/consensus/locks.py) with the document API's
bounds and codes (`LOCK_RULES` in proposals.py, which checks them on every proposal): members with a writing
role lock, the holder releases, and leaving releases the leaver's locks (agents.py).

Every write locks the document row first (`library.get(for_update=True)`, which its access checks need),
which orders concurrent lockers of one document on PostgreSQL (SQLite writers are serialised anyway)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import locks
from domain.documents import library
from domain.documents.access import Caller
from domain.documents.membership import agent_ctx, member, require_writer
from domain.documents.models import Document
from domain.documents.proposals import LOCK_RULES, DocumentResource
from domain.kernel.context import Context


async def lock_section(
    session: AsyncSession, caller: Caller, document_id: str, section_id: str, ttl_seconds: int
) -> locks.Lock:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    require_writer(agent, "lock sections")
    return await locks.lock_section(
        session,
        agent_ctx(caller, agent),
        DocumentResource(doc, locked=True),
        LOCK_RULES,
        section_id=section_id,
        ttl_seconds=ttl_seconds,
    )


async def unlock_section(
    session: AsyncSession, caller: Caller, document_id: str, section_id: str
) -> locks.Unlocked:
    """Only the holder releases; a member with any role may ask (nobody else holds its locks)."""
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    return await locks.unlock_section(
        session,
        agent_ctx(caller, agent),
        DocumentResource(doc, locked=True),
        LOCK_RULES,
        section_id=section_id,
    )


async def release_all(
    session: AsyncSession, ctx: Context, doc: Document, agent_id: str, reason: locks.UnlockReason
) -> int:
    """Release every lock the agent holds on the document (it is leaving); the number released. The caller
    holds the document's row lock."""
    return await locks.release_all(session, ctx, locks.Ref("document", doc.id), agent_id, reason)


async def expire_locks(session: AsyncSession) -> int:
    """The sweep: documents' section locks end at their TTL."""
    return await locks.expire_due(session, "document")
