"""Escalating a question on a topic to human reviewers."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import engine as consensus
from domain.consensus import escalations, sections
from domain.kernel.context import Context
from domain.kernel.errors import NotFound
from domain.topics import store as topics
from domain.topics.consensus import TopicResource


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
    if section_id and sections.find(topic.content, section_id) is None:
        raise NotFound(
            f"section {section_id} does not exist on this topic", code="section_not_found", field="sectionId"
        )
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
        priority=priority or "normal",
    )
