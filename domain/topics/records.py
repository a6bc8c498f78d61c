"""Intents, constraints and salience on a topic's sections, through the shared records (domain/consensus/
records.py) with the hub's names (spec/knowledge-graph-api.md): participants write, anyone reads."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import records
from domain.kernel.context import Context
from domain.topics import store as topics
from domain.topics.consensus import TopicResource

VOCABULARY = records.Vocabulary(
    intent_declared="pact.intent.declared",
    constraint_published="pact.constraint.published",
    salience_set="pact.salience.updated",
    section_not_found="section_not_found",
    constraint_kind_field="category",
)
DEFAULT_CATEGORY = "general"


async def declare_intent(
    session: AsyncSession, ctx: Context, topic_id: str, *, section_id: str, goal: str, category: str | None
) -> records.Intent:
    topic = await topics.joined(session, ctx, topic_id)
    return await records.declare_intent(
        session,
        ctx,
        TopicResource(topic),
        VOCABULARY,
        section_id=section_id,
        goal=goal,
        category=category or DEFAULT_CATEGORY,
    )


async def list_intents(session: AsyncSession, topic_id: str, section_id: str | None) -> records.Intents:
    topic = await topics.get(session, topic_id)
    return await records.list_intents(session, TopicResource(topic), section_id=section_id)


async def publish_constraint(
    session: AsyncSession,
    ctx: Context,
    topic_id: str,
    *,
    section_id: str,
    boundary: str,
    category: str | None,
) -> records.Constraint:
    topic = await topics.joined(session, ctx, topic_id)
    return await records.publish_constraint(
        session,
        ctx,
        TopicResource(topic),
        VOCABULARY,
        section_id=section_id,
        boundary=boundary,
        kind=category or DEFAULT_CATEGORY,
    )


async def list_constraints(
    session: AsyncSession,
    topic_id: str,
    section_id: str | None,
    status: records.ConstraintStatus = records.ConstraintStatus.ACTIVE,
) -> records.Constraints:
    topic = await topics.get(session, topic_id)
    return await records.list_constraints(session, TopicResource(topic), section_id=section_id, status=status)


async def withdraw_constraint(
    session: AsyncSession, ctx: Context, topic_id: str, constraint_id: str
) -> records.Constraint:
    """Its author withdraws a constraint (joined or not: it stays the constraint's author)."""
    topic = await topics.get(session, topic_id)
    return await records.withdraw_constraint(session, ctx, TopicResource(topic), VOCABULARY, constraint_id)


async def object_to_intent(
    session: AsyncSession, ctx: Context, topic_id: str, intent_id: str, *, reason: str
) -> records.Intent:
    """A participant objects to another participant's intent."""
    topic = await topics.joined(session, ctx, topic_id)
    return await records.object_to_intent(session, ctx, TopicResource(topic), intent_id, reason=reason)


async def set_salience(
    session: AsyncSession, ctx: Context, topic_id: str, *, section_id: str, score: int
) -> records.Score:
    topic = await topics.joined(session, ctx, topic_id)
    return await records.set_salience(
        session, ctx, TopicResource(topic), VOCABULARY, section_id=section_id, score=score
    )


async def salience_map(session: AsyncSession, topic_id: str) -> records.SalienceMap:
    """Every section of the topic with its scores and average, then scores on sections it no longer has."""
    topic = await topics.get(session, topic_id)
    return await records.salience_map(session, TopicResource(topic), topic.content)
