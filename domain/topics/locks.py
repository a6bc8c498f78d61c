"""Section locks on a topic (PACT v2.0.3 §4.3 `section.lock`/`section.unlock`), through the shared locks
(domain/consensus/locks.py) with the hub's bounds and codes (`LOCK_RULES` in consensus.py, which checks them
on every proposal): a participant locks a section for up to 60 s, the holder releases it, and an agent
leaving the topic gives its locks up through `release_all`.

Every write locks the topic row first (`store.get_locked`), which orders concurrent lockers of one topic on
PostgreSQL (SQLite writers are serialised anyway)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import locks
from domain.kernel.context import Context
from domain.kernel.errors import Forbidden
from domain.topics import store as topics
from domain.topics.consensus import LOCK_RULES, TopicResource


async def _joined_locked(session: AsyncSession, ctx: Context, topic_id: str) -> TopicResource:
    """The topic, row-locked, once the acting agent is one of its participants (404, then 403)."""
    topic = await topics.get_locked(session, topic_id)
    if not await topics.is_participant(session, topic.id, ctx.require_actor().id):
        raise Forbidden("join the topic first (POST /api/pact/{topicId}/join)", code="not_joined")
    return TopicResource(topic, locked=True)


async def lock_section(
    session: AsyncSession, ctx: Context, topic_id: str, *, section_id: str, ttl_seconds: int
) -> locks.Lock:
    resource = await _joined_locked(session, ctx, topic_id)
    return await locks.lock_section(
        session, ctx, resource, LOCK_RULES, section_id=section_id, ttl_seconds=ttl_seconds
    )


async def unlock_section(
    session: AsyncSession, ctx: Context, topic_id: str, *, section_id: str
) -> locks.Unlocked:
    resource = await _joined_locked(session, ctx, topic_id)
    return await locks.unlock_section(session, ctx, resource, LOCK_RULES, section_id=section_id)


async def release_all(
    session: AsyncSession, ctx: Context, topic_id: str, agent_id: str, reason: locks.UnlockReason
) -> int:
    """Release every lock the agent holds on the topic (for the topic's leave: reason `left`); the number
    released. Locks the topic row first, as every lock write does."""
    topic = await topics.get_locked(session, topic_id)
    return await locks.release_all(session, ctx, locks.Ref("topic", topic.id), agent_id, reason)


async def expire_locks(session: AsyncSession) -> int:
    """The sweep: topics' section locks end at their TTL."""
    return await locks.expire_due(session, "topic")
