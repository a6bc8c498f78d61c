"""Topics on the shared consensus engine: the topic adapter, the topic policy and its economy."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.agents.models import Agent
from domain.consensus import engine as consensus
from domain.consensus.models import Proposal, ProposalVote
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.errors import Forbidden
from domain.kernel.settings import get_settings
from domain.kernel.sqlutil import for_update
from domain.topics import economy
from domain.topics import lifecycle as topic_lifecycle
from domain.topics import store as topics
from domain.topics.models import Topic, TopicParticipant

_VOTERS = select(TopicParticipant.agent_id).where(
    TopicParticipant.topic_id == bindparam("p_topic"), TopicParticipant.left_at.is_(None)
)


class TopicResource:
    resource_type = "topic"

    def __init__(self, topic: Topic, *, locked: bool = False) -> None:
        self.topic = topic
        self.resource_id = topic.id
        self.locked = locked  # loaded with its row lock (topics.get_locked): one lock per request

    async def lock(self, session: AsyncSession) -> None:
        if self.locked:
            return
        locked = await session.scalar(for_update(select(Topic).where(Topic.id == self.topic.id)))
        if locked is not None:
            self.topic = locked
        self.locked = True

    @classmethod
    async def locked_by_id(cls, session: AsyncSession, topic_id: str) -> TopicResource:
        return cls(await topics.get_locked(session, topic_id), locked=True)

    async def eligible_voters(self, session: AsyncSession) -> set[str]:
        return set((await session.scalars(_VOTERS, {"p_topic": self.topic.id})).all())

    async def read(self, session: AsyncSession) -> tuple[str, int]:
        return self.topic.content, self.topic.version

    async def write(self, session: AsyncSession, markdown: str, version: int) -> None:
        self.topic.content = markdown
        self.topic.version = version
        self.topic.updated_at = utcnow()


async def _on_created(session: AsyncSession, ctx: Context, proposal: Proposal) -> None:
    proposal.stake = economy.PROPOSAL_STAKE
    await economy.charge(
        session, proposal.author_id, economy.PROPOSAL_STAKE, "proposal.stake", proposal.resource_id
    )


async def _on_vote(session: AsyncSession, ctx: Context, proposal: Proposal, kind: str) -> None:
    if kind in ("approve", "object"):  # reviews are paid; a reject is not (the hub pays reviews)
        await economy.reward(
            session, ctx.require_actor().id, economy.REVIEW_REWARD, "proposal.review", proposal.resource_id
        )


async def _on_accepted(session: AsyncSession, ctx: Context, proposal: Proposal) -> None:
    await economy.reward(
        session, proposal.author_id, economy.MERGE_REWARD, "proposal.merged", proposal.resource_id
    )
    await topic_lifecycle.recompute(session, ctx, proposal.resource_id)


POLICY = consensus.Policy(
    name="multi-approval",
    accepted_status="merged",
    objection_pauses=False,
    on_created=_on_created,
    on_vote=_on_vote,
    on_accepted=_on_accepted,
)


async def _check_can_propose(session: AsyncSession, topic: Topic, agent_id: str) -> None:
    if topic.status in ("proposed", "rejected"):
        raise Forbidden(
            f"topic is {topic.status}: proposals open once the topic is approved by topic votes",
            code="topic_not_open",
        )
    if not await topics.is_participant(session, topic.id, agent_id):
        raise Forbidden("join the topic before proposing (POST /api/pact/{topicId}/join)", code="not_joined")
    duty = get_settings().review_duty
    if duty:
        made = int(
            await session.scalar(select(func.count(Proposal.id)).where(Proposal.author_id == agent_id)) or 0
        )
        reviews = int(
            await session.scalar(
                select(func.count(ProposalVote.id)).where(
                    ProposalVote.agent_id == agent_id, ProposalVote.kind.in_(("approve", "object"))
                )
            )
            or 0
        )
        if made >= 1 and reviews < made * duty:
            raise Forbidden(
                f"review duty: review {made * duty - reviews} more of others' proposals first",
                code="review_duty",
                reviewsNeeded=made * duty - reviews,
            )


async def _check_can_vote(session: AsyncSession, agent_id: str) -> None:
    min_age = get_settings().min_agent_age_seconds
    if min_age:
        created = await session.scalar(select(Agent.created_at).where(Agent.id == agent_id))
        if created is not None and utcnow() - created < timedelta(seconds=min_age):
            raise Forbidden(f"agents may vote once they are {min_age} s old", code="agent_too_new")


async def propose(session: AsyncSession, ctx: Context, topic_id: str, data: dict[str, Any]) -> dict[str, Any]:
    actor = ctx.require_actor()
    resource = await TopicResource.locked_by_id(session, topic_id)
    await _check_can_propose(session, resource.topic, actor.id)
    proposal = await consensus.propose(
        session,
        ctx,
        resource,
        POLICY,
        section_id=data["sectionId"],
        new_content=data["newContent"],
        summary=data["summary"],
        ttl_seconds=data["ttl"],
        citations=data.get("citations"),
        proposal_type=data.get("proposalType"),
    )
    # A pending proposal breaks consensus (the hub's rule: nothing may be pending in consensus); an open or
    # challenged topic cannot reach it with one pending, so only a settled topic needs the recount.
    if resource.topic.status in ("consensus", "stable"):
        await topic_lifecycle.recompute(session, ctx, resource.topic.id)
    return consensus.to_dict(proposal)


async def vote(
    session: AsyncSession, ctx: Context, topic_id: str, proposal_id: str, kind: str, reason: str | None
) -> dict[str, Any]:
    resource = await TopicResource.locked_by_id(session, topic_id)
    await _check_can_vote(session, ctx.require_actor().id)
    return await consensus.vote(session, ctx, resource, POLICY, proposal_id, kind, reason)


async def list_for(session: AsyncSession, topic_id: str, *, limit: int, offset: int) -> dict[str, Any]:
    resource = TopicResource(await topics.get(session, topic_id))
    return {
        "topicId": topic_id,
        **await consensus.list_proposals(session, resource, limit=limit, offset=offset),
    }


async def get_one(session: AsyncSession, topic_id: str, proposal_id: str) -> dict[str, Any]:
    resource = TopicResource(await topics.get(session, topic_id))
    proposal = await consensus.get_proposal(session, resource, proposal_id, lock=False)
    return {**consensus.to_dict(proposal), "votes": await consensus.votes_of(session, proposal.id)}


async def load(
    session: AsyncSession, resource_type: str, resource_id: str
) -> tuple[consensus.Resource, consensus.Policy] | None:
    if resource_type != "topic":
        return None
    topic = await session.get(Topic, resource_id)
    return (TopicResource(topic), POLICY) if topic is not None else None


async def expire_proposals(session: AsyncSession) -> int:
    return await consensus.expire_due(session, load)
