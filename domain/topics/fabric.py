"""A hub topic seen as a PACT fabric (domain/consensus/sessions.py `Fabric`): its active participants, closed
once rejected, settled in consensus or stable. Read by the session operations (domain/topics/sessions.py) and
by a done signal's answer (domain/topics/lifecycle.py), without importing either."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.agents.models import Agent
from domain.consensus import sessions
from domain.topics.models import Topic, TopicParticipant
from domain.topics.store import TopicStatus

RESOURCE = "topic"


async def fabric_of(session: AsyncSession, topic: Topic) -> sessions.Fabric:
    rows = (
        await session.execute(
            select(TopicParticipant, Agent.name)
            .join(Agent, Agent.id == TopicParticipant.agent_id)
            .where(TopicParticipant.topic_id == topic.id, TopicParticipant.left_at.is_(None))
            .order_by(TopicParticipant.joined_at, TopicParticipant.id)
        )
    ).all()
    members = tuple(
        sessions.Member(
            id=p.agent_id,
            name=name,
            role=p.role,
            trust_level=sessions.TrustLevel.COLLABORATOR,
            org=p.agent_id,
            joined_at=p.joined_at,
        )
        for p, name in rows
    )
    return sessions.Fabric(
        RESOURCE,
        topic.id,
        members,
        closed=topic.status == TopicStatus.REJECTED,
        settled=topic.status in (TopicStatus.CONSENSUS, TopicStatus.STABLE),
    )
