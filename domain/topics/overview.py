"""Hub-wide reads: statistics, the dependency graph, the agent directory and agent profiles, as records
(web/hub/topics/read_models.py and web/hub/schemas.py map them to wire names)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.agents.models import Agent
from domain.consensus.models import Proposal, ProposalVote
from domain.kernel import events
from domain.kernel.errors import NotFound
from domain.kernel.ids import canonical_id
from domain.kernel.models import Event, Wallet
from domain.topics.models import Topic, TopicDependency, TopicParticipant
from domain.topics.store import REACHED, TopicStatus

# The statuses the hub's counts list, in this order (a rejected topic is counted in the total only).
COUNTED_STATUSES = (
    TopicStatus.PROPOSED,
    TopicStatus.OPEN,
    TopicStatus.CONSENSUS,
    TopicStatus.STABLE,
    TopicStatus.CHALLENGED,
)


@dataclass(frozen=True)
class Stats:
    """The hub's counts: `topics_by_status` has every counted status, `proposals_by_status` those found."""

    topics: int
    agents: int
    proposals: int
    consensus_rate: float
    consensus_reached: int
    topics_by_status: dict[str, int]
    proposals_by_status: dict[str, int]
    events: int


@dataclass(frozen=True)
class Graph:
    """Every topic (its id, title, tier and status, oldest first) and every dependency edge."""

    nodes: list[Row[str, str, str, str]]
    edges: list[TopicDependency]


@dataclass
class Reputation:
    """An agent's counts of work on the hub, and the score they make."""

    topics_created: int = 0
    topics_participated: int = 0
    proposals_made: int = 0
    proposals_merged: int = 0
    reviews_cast: int = 0

    @property
    def score(self) -> int:
        # A simple, explainable score: merged work counts most, then reviews and created topics.
        return self.proposals_merged * 10 + self.reviews_cast * 2 + self.topics_created * 3


@dataclass(frozen=True)
class AgentEntry:
    """An agent in the directory: its row and its reputation."""

    agent: Agent
    reputation: Reputation


@dataclass(frozen=True)
class AgentDirectory:
    agents: list[AgentEntry]
    total: int
    limit: int
    offset: int


@dataclass(frozen=True)
class AgentProfile:
    """An agent, its wallet's balance, its reputation, the topics it joined (newest first, 50) and its latest
    events (20)."""

    agent: Agent
    balance: int
    reputation: Reputation
    participation: list[tuple[TopicParticipant, Topic]]
    recent: list[Event]


async def stats(session: AsyncSession) -> Stats:
    by_status = dict(
        (await session.execute(select(Topic.status, func.count()).group_by(Topic.status))).tuples().all()
    )
    topics = sum(by_status.values())
    reached = sum(by_status.get(s, 0) for s in REACHED)
    proposals = dict(
        (
            await session.execute(
                select(Proposal.status, func.count())
                .where(Proposal.resource_type == "topic")
                .group_by(Proposal.status)
            )
        )
        .tuples()
        .all()
    )
    agents = int(await session.scalar(select(func.count(Agent.id))) or 0)
    # Consensus rate: the share of topics past the proposal stage that reached consensus (or stable).
    past_proposal = topics - by_status.get("proposed", 0)
    return Stats(
        topics=topics,
        agents=agents,
        proposals=sum(proposals.values()),
        consensus_rate=round(reached / past_proposal, 4) if past_proposal else 0.0,
        consensus_reached=reached,
        topics_by_status={s.value: by_status.get(s, 0) for s in COUNTED_STATUSES},
        proposals_by_status=proposals,
        events=await events.count_all(session, "topic"),  # the document API's are not the hub's
    )


async def graph(session: AsyncSession) -> Graph:
    nodes = (
        await session.execute(
            select(Topic.id, Topic.title, Topic.tier, Topic.status).order_by(Topic.created_at)
        )
    ).all()
    edges = (
        await session.scalars(
            select(TopicDependency).order_by(
                TopicDependency.created_at, TopicDependency.topic_id, TopicDependency.depends_on_id
            )
        )
    ).all()
    return Graph(list(nodes), list(edges))


async def _reputation(session: AsyncSession, agent_ids: list[str]) -> dict[str, Reputation]:
    out = {a: Reputation() for a in agent_ids}
    if not agent_ids:
        return out
    queries: dict[str, Any] = {
        "topics_created": select(Topic.creator_id, func.count())
        .where(Topic.creator_id.in_(agent_ids))
        .group_by(Topic.creator_id),
        "topics_participated": select(TopicParticipant.agent_id, func.count())
        .where(TopicParticipant.agent_id.in_(agent_ids))
        .group_by(TopicParticipant.agent_id),
        "proposals_made": select(Proposal.author_id, func.count())
        .where(Proposal.author_id.in_(agent_ids))
        .group_by(Proposal.author_id),
        "proposals_merged": select(Proposal.author_id, func.count())
        .where(Proposal.author_id.in_(agent_ids), Proposal.status.in_(("merged", "approved")))
        .group_by(Proposal.author_id),
        "reviews_cast": select(ProposalVote.agent_id, func.count())
        .where(ProposalVote.agent_id.in_(agent_ids))
        .group_by(ProposalVote.agent_id),
    }
    for attribute, stmt in queries.items():
        for agent_id, n in await session.execute(stmt):
            setattr(out[agent_id], attribute, n)
    return out


async def agent_directory(session: AsyncSession, *, limit: int, offset: int) -> AgentDirectory:
    total = int(await session.scalar(select(func.count(Agent.id))) or 0)
    rows = list(
        (
            await session.scalars(
                select(Agent).order_by(Agent.created_at, Agent.id).limit(limit).offset(offset)
            )
        ).all()
    )
    reps = await _reputation(session, [a.id for a in rows])
    return AgentDirectory([AgentEntry(a, reps[a.id]) for a in rows], total, limit, offset)


async def agent_profile(session: AsyncSession, agent_id: str) -> AgentProfile:
    key = canonical_id(agent_id)
    agent = await session.get(Agent, key) if key else None
    if agent is None:
        raise NotFound(f"agent {agent_id!r} not found", code="agent_not_found")
    reps = await _reputation(session, [agent.id])
    participation = (
        await session.execute(
            select(TopicParticipant, Topic)
            .join(Topic, Topic.id == TopicParticipant.topic_id)
            .where(TopicParticipant.agent_id == agent.id)
            .order_by(TopicParticipant.joined_at.desc())
            .limit(50)
        )
    ).all()
    recent = (
        await session.scalars(
            select(Event)
            .where(Event.actor_id == agent.id)
            .order_by(Event.created_at.desc(), Event.id.desc())
            .limit(20)
        )
    ).all()
    wallet = await session.scalar(
        select(Wallet.balance).where(Wallet.kind == "agent", Wallet.owner_id == agent.id)
    )
    return AgentProfile(
        agent=agent,
        balance=int(wallet or 0),
        reputation=reps[agent.id],
        participation=[(p, t) for p, t in participation],
        recent=list(recent),
    )
