"""An agent leaves a topic (PACT v2.0.3 §4.1 `agent.leave`, §7.1 `DELETE /api/pact/{topicId}/leave`).

A participant's row stays, with `left_at` set: it is listed as inactive, its proposals, votes, records and
done signal stay, its section locks are released, and it no longer counts where active participants count
(voters, done signals, the consensus the topic's status follows, which is computed again). Joining again
clears `left_at` (store.join), and the agent is active again with what it had. The topic's row lock orders a
leave with the topic's other writes; the leave itself is one conditional UPDATE, so two at once leave once.

A reviewer may also remove an agent (PACT §9.2, "remove an agent: force agent.leave"): the same leave,
recorded as the person's act (`pact.agent.left` by an Individual, with `removedBy` and `reason`), and the row
keeps who removed it and why. A removed agent may not join again (store.admit refuses it) until a reviewer
readmits it, which lifts the bar without joining it: the agent joins again itself."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.agents.models import Agent
from domain.consensus.locks import UnlockReason
from domain.kernel import audit, events
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.errors import Forbidden, NotFound
from domain.topics import lifecycle, locks, topic_events
from domain.topics import store as topics
from domain.topics.models import Topic, TopicParticipant


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


@dataclass(frozen=True)
class Removal:
    """An agent's standing on a topic after a reviewer removed or readmitted it; `changed` is False when it
    was removed already (or, readmitting, was not)."""

    topic_id: str
    title: str
    topic_status: str
    agent_id: str
    agent_name: str
    changed: bool
    acted_by: str  # the reviewer who called
    removed_at: datetime | None  # None: the agent may join (again)
    removed_by: str | None
    note: str | None  # why it was removed

    @property
    def removed(self) -> bool:
        return self.removed_at is not None

    @classmethod
    def of(
        cls, topic: Topic, status: str, row: TopicParticipant, name: str, changed: bool, by: str
    ) -> Removal:
        return cls(
            topic.id,
            topic.title,
            status,
            row.agent_id,
            name,
            changed,
            by,
            row.removed_at,
            row.removed_by,
            row.removal_note,
        )


async def _participant(session: AsyncSession, topic_id: str, agent_id: str) -> tuple[TopicParticipant, str]:
    """The agent's participation in the topic, row-locked, and its name (404 if it never joined)."""
    found = (
        await session.execute(
            select(TopicParticipant, Agent.name)
            .join(Agent, Agent.id == TopicParticipant.agent_id)
            .where(TopicParticipant.topic_id == topic_id, TopicParticipant.agent_id == agent_id)
            .with_for_update(of=TopicParticipant)
        )
    ).first()
    if found is None:
        raise NotFound(
            f"agent {agent_id!r} has never joined this topic", code="participant_not_found", field="agentId"
        )
    return found[0], found[1]


async def remove(session: AsyncSession, ctx: Context, topic_id: str, agent_id: str, note: str) -> Removal:
    """A reviewer removes the agent from the topic: it leaves if it had not (locks released, the topic's
    status computed again) and may not join again until readmitted. Removing a removed agent changes
    nothing."""
    person = ctx.require_actor()
    topic = await topics.get_locked(session, topic_id)
    row, name = await _participant(session, topic.id, agent_id)
    if row.removed_at is not None:
        return Removal.of(topic, topic.status, row, name, False, person.name)
    now = utcnow()
    was_active = row.left_at is None
    if was_active:
        row.left_at = now
    row.removed_at, row.removed_by, row.removal_note = now, person.name, note
    events.append(session, topics.stream(topic.id), "pact.agent.left", ctx, data=topic_events.removed(row))
    if was_active:
        await locks.release_all(session, ctx, topic.id, row.agent_id, UnlockReason.LEFT)
    audit.record(
        session, ctx, "review.topic.agent_remove", "topic", topic.id, after=topic_events.removed(row)
    )
    status = await lifecycle.recompute(session, ctx, topic.id) if was_active else topic.status
    return Removal.of(topic, status, row, name, True, person.name)


async def readmit(session: AsyncSession, ctx: Context, topic_id: str, agent_id: str, note: str) -> Removal:
    """A reviewer lifts a removal: the agent may join the topic again (this does not join it). Readmitting an
    agent nobody removed changes nothing."""
    person = ctx.require_actor()
    topic = await topics.get_locked(session, topic_id)
    row, name = await _participant(session, topic.id, agent_id)
    if row.removed_at is None:
        return Removal.of(topic, topic.status, row, name, False, person.name)
    before = topic_events.removed(row)
    row.removed_at = row.removed_by = row.removal_note = None
    audit.record(
        session,
        ctx,
        "review.topic.agent_readmit",
        "topic",
        topic.id,
        before=before,
        after=topic_events.readmission(row.agent_id, note),
    )
    return Removal.of(topic, topic.status, row, name, True, person.name)


@dataclass(frozen=True)
class RemovedAgent:
    """An agent a reviewer removed from the topic and nobody readmitted yet."""

    agent_id: str
    agent_name: str
    removed_by: str | None
    removed_at: datetime
    note: str | None


REMOVED_SHOWN = 200  # a summary lists this many, the latest first


async def removed_agents(session: AsyncSession, topic_id: str) -> tuple[RemovedAgent, ...]:
    """The agents reviewers removed from the topic, the latest removal first (at most REMOVED_SHOWN)."""
    rows = await session.execute(
        select(
            TopicParticipant.agent_id,
            Agent.name,
            TopicParticipant.removed_by,
            TopicParticipant.removed_at,
            TopicParticipant.removal_note,
        )
        .join(Agent, Agent.id == TopicParticipant.agent_id)
        .where(TopicParticipant.topic_id == topic_id, TopicParticipant.removed_at.is_not(None))
        .order_by(TopicParticipant.removed_at.desc(), TopicParticipant.id.desc())
        .limit(REMOVED_SHOWN)
    )
    return tuple(
        RemovedAgent(agent_id, name, by, at, note)
        for agent_id, name, by, at, note in rows.tuples()
        if at is not None  # the statement's own condition
    )
