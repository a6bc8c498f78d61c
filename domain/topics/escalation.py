"""Escalating a question on a topic to human reviewers, asking them a question to wait on (PACT ask-human),
and the agents' reading of both with their answers."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import engine as consensus
from domain.consensus import escalations, sections
from domain.consensus.escalations import EscalationKind, EscalationStatus
from domain.consensus.models import EscalationPriority
from domain.kernel.context import Context
from domain.kernel.errors import NotFound
from domain.topics import store as topics
from domain.topics.consensus import TopicResource
from domain.topics.models import Topic


def _check_section(topic: Topic, section_id: str | None) -> None:
    if section_id and sections.find(topic.content, section_id) is None:
        raise NotFound(
            f"section {section_id} does not exist on this topic", code="section_not_found", field="sectionId"
        )


async def escalate(
    session: AsyncSession,
    ctx: Context,
    topic_id: str,
    *,
    question: str | None,
    message: str | None,
    section_id: str | None,
    proposal_id: str | None,
    priority: str | None,
) -> escalations.Raised:
    """Raise a question for human reviewers (`question` or `message`, see escalations.question_of); a named
    section or proposal must belong to this topic."""
    text = escalations.question_of(question, message)
    topic = await topics.get(session, topic_id)
    _check_section(topic, section_id)
    if proposal_id:
        await consensus.get_proposal(session, TopicResource(topic), proposal_id, lock=False)
    return await escalations.create(
        session,
        ctx,
        resource_type="topic",
        resource_id=topic.id,
        message=text,
        section_id=section_id,
        proposal_id=proposal_id,
        priority=priority or EscalationPriority.MEDIUM,
    )


async def ask(
    session: AsyncSession,
    ctx: Context,
    topic_id: str,
    *,
    question: str,
    section_id: str | None,
    context: str | None,
    timeout_seconds: int | None,
) -> escalations.View:
    """Ask the reviewers a question and wait for the answer until its timeout (a named section must be the
    topic's); it joins the reviewers' queue as escalations do."""
    topic = await topics.get(session, topic_id)
    _check_section(topic, section_id)
    return await escalations.ask(
        session,
        ctx,
        resource_type="topic",
        resource_id=topic.id,
        question=question,
        section_id=section_id,
        context=context,
        timeout_seconds=timeout_seconds,
    )


async def listing(
    session: AsyncSession,
    ctx: Context,
    topic_id: str,
    *,
    kind: EscalationKind,
    state: EscalationStatus | None,
    limit: int,
    offset: int,
) -> escalations.Listing:
    """The agent's own escalations (or questions) on the topic, with their answers; the topic's creator
    reads every agent's."""
    agent = ctx.require_actor()
    topic = await topics.get(session, topic_id)
    mine = None if topic.creator_id == agent.id else [agent.id]
    return await escalations.listing(
        session,
        resource_type="topic",
        resource_id=topic.id,
        kind=kind,
        raised_by=mine,
        state=state,
        limit=limit,
        offset=offset,
    )
