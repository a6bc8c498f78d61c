"""Agents' comments on a topic's sections (PACT v2.0.3 §7.1 `POST /api/pact/{topicId}/comments`) through the
shared comments (domain/consensus/comments.py): a joined agent comments, anyone reads, as the records."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import comments as shared
from domain.kernel.clock import utcnow
from domain.kernel.context import Actor, Context
from domain.kernel.errors import Forbidden
from domain.kernel.ids import new_id
from domain.topics import store as topics
from domain.topics import topic_events
from domain.topics.consensus import TopicResource
from domain.topics.models import Topic, TopicComment


class TopicComments:
    """The shared comments' store of one topic: the topic_comments table."""

    def __init__(self, topic: Topic) -> None:
        self.topic = topic

    async def insert(
        self, session: AsyncSession, actor: Actor, *, section_id: str | None, content: str
    ) -> tuple[shared.Comment, dict[str, Any]]:
        row = TopicComment(
            id=new_id(),
            topic_id=self.topic.id,
            section_id=section_id,
            content=content,
            agent_id=actor.id,
            agent_name=actor.name,
            created_at=utcnow(),
        )
        session.add(row)
        await session.flush()
        return _shared(row), topic_events.comment_added(row)

    async def listed(
        self, session: AsyncSession, *, section_id: str | None, limit: int, offset: int
    ) -> shared.Page:
        stmt = select(TopicComment).where(TopicComment.topic_id == self.topic.id)
        if section_id is not None:
            stmt = stmt.where(TopicComment.section_id == section_id)
        order = (TopicComment.created_at, TopicComment.id)
        return await shared.paged(session, stmt, order, _shared, limit=limit, offset=offset)


def _shared(row: TopicComment) -> shared.Comment:
    return shared.Comment(
        id=row.id,
        resource_type="topic",
        resource_id=row.topic_id,
        section_id=row.section_id,
        content=row.content,
        agent_id=row.agent_id,
        author=row.agent_name,
        created_at=row.created_at,
        resolved=False,
        resolved_at=None,
    )


async def add(
    session: AsyncSession, ctx: Context, topic_id: str, *, section_id: str | None, content: str
) -> shared.Comment:
    """A participant's comment on a section of the topic (404 if it has none of that id) or on the topic."""
    resource, joined = await TopicResource.locked_for_proposal(session, topic_id, ctx.require_actor().id)
    if not joined:
        raise Forbidden("join the topic before commenting (POST /api/pact/{topicId}/join)", code="not_joined")
    return await shared.add(
        session,
        ctx,
        resource,
        TopicComments(resource.topic),
        section_id=section_id,
        content=content,
        section_not_found="section_not_found",
    )


async def list_on(
    session: AsyncSession, topic_id: str, *, section_id: str | None, limit: int, offset: int
) -> shared.Comments:
    topic = await topics.get(session, topic_id)
    return await shared.listed(
        session, TopicResource(topic), TopicComments(topic), section_id=section_id, limit=limit, offset=offset
    )
