"""An agent leaves a topic (PACT v2.0.3 §4.1 `agent.leave`, §7.1 `DELETE /api/pact/{topicId}/leave`).

A participant's row stays, with `left_at` set: it is listed as inactive, its proposals, votes, records and
done signal stay, its section locks are released, and it no longer counts where active participants count
(voters, done signals, the consensus the topic's status follows, which is computed again). Joining again
clears `left_at` (store.join), and the agent is active again with what it had. The topic's row lock orders a
leave with the topic's other writes; the leave itself is one conditional UPDATE, so two at once leave once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus.locks import UnlockReason
from domain.kernel import audit, events
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.errors import Forbidden
from domain.topics import lifecycle, locks
from domain.topics import store as topics
from domain.topics.models import TopicParticipant


@dataclass(frozen=True)
class Left:
    topic_id: str
    agent_id: str
    agent_name: str
    role: str
    left_at: datetime
    topic_status: str  # after the leave (an aligned agent leaving can break consensus)


async def leave(session: AsyncSession, ctx: Context, topic_id: str) -> Left:
    actor = ctx.require_actor()
    topic = await topics.get_locked(session, topic_id)
    now = utcnow()
    role = await session.scalar(
        update(TopicParticipant)
        .where(
            TopicParticipant.topic_id == topic.id,
            TopicParticipant.agent_id == actor.id,
            TopicParticipant.left_at.is_(None),
        )
        .values(left_at=now)
        .returning(TopicParticipant.role)
        .execution_options(synchronize_session=False)
    )
    if role is None:
        raise Forbidden("this agent has not joined the topic (or has left it)", code="not_joined")
    events.append(session, topics.stream(topic.id), "pact.agent.left", ctx, data={"role": role})
    await locks.release_all(session, ctx, topic.id, actor.id, UnlockReason.LEFT)
    audit.record(session, ctx, "topic.leave", "topic", topic.id, after={"agentId": actor.id, "role": role})
    status = await lifecycle.recompute(session, ctx, topic.id)
    return Left(topic.id, actor.id, actor.name, role, now, status)
