"""Hub-wide reads: statistics, the dependency graph, the agent directory and agent profiles."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.agents.models import Agent
from domain.consensus.models import Proposal, ProposalVote
from domain.kernel import events
from domain.kernel.clock import iso
from domain.kernel.errors import NotFound
from domain.kernel.ids import canonical_id
from domain.kernel.models import Event, Wallet
from domain.topics.models import Topic, TopicDependency, TopicParticipant
from domain.topics.store import REACHED


async def stats(session: AsyncSession) -> dict[str, Any]:
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
    return {
        "topicCount": topics,
        "agentCount": agents,
        "proposalCount": sum(proposals.values()),
        "consensusRate": round(reached / past_proposal, 4) if past_proposal else 0.0,
        "consensusReached": reached,
        "topicsByStatus": {
            s: by_status.get(s, 0) for s in ("proposed", "open", "consensus", "stable", "challenged")
        },
        "proposalsByStatus": proposals,
        "eventCount": await events.count_all(session, "topic"),  # the document API's are not the hub's
    }


async def graph(session: AsyncSession) -> dict[str, Any]:
    nodes = [
        {"id": t.id, "title": t.title, "tier": t.tier, "status": t.status}
        for t in (
            await session.execute(
                select(Topic.id, Topic.title, Topic.tier, Topic.status).order_by(Topic.created_at)
            )
        ).all()
    ]
    edges = [
        {"source": d.topic_id, "target": d.depends_on_id, "relationship": d.relationship}
        for d in (
            await session.scalars(
                select(TopicDependency).order_by(
                    TopicDependency.created_at, TopicDependency.topic_id, TopicDependency.depends_on_id
                )
            )
        ).all()
    ]
    return {"nodes": nodes, "edges": edges}


async def _reputation(session: AsyncSession, agent_ids: list[str]) -> dict[str, dict[str, int]]:
    out = {
        a: {
            "topicsCreated": 0,
            "topicsParticipated": 0,
            "proposalsMade": 0,
            "proposalsMerged": 0,
            "reviewsCast": 0,
        }
        for a in agent_ids
    }
    if not agent_ids:
        return out
    queries = {
        "topicsCreated": select(Topic.creator_id, func.count())
        .where(Topic.creator_id.in_(agent_ids))
        .group_by(Topic.creator_id),
        "topicsParticipated": select(TopicParticipant.agent_id, func.count())
        .where(TopicParticipant.agent_id.in_(agent_ids))
        .group_by(TopicParticipant.agent_id),
        "proposalsMade": select(Proposal.author_id, func.count())
        .where(Proposal.author_id.in_(agent_ids))
        .group_by(Proposal.author_id),
        "proposalsMerged": select(Proposal.author_id, func.count())
        .where(Proposal.author_id.in_(agent_ids), Proposal.status.in_(("merged", "approved")))
        .group_by(Proposal.author_id),
        "reviewsCast": select(ProposalVote.agent_id, func.count())
        .where(ProposalVote.agent_id.in_(agent_ids))
        .group_by(ProposalVote.agent_id),
    }
    for key, stmt in queries.items():
        for agent_id, n in await session.execute(stmt):
            out[agent_id][key] = n
    for rep in out.values():
        # A simple, explainable score: merged work counts most, then reviews and created topics.
        rep["score"] = rep["proposalsMerged"] * 10 + rep["reviewsCast"] * 2 + rep["topicsCreated"] * 3
    return out


async def agent_directory(session: AsyncSession, *, limit: int, offset: int) -> dict[str, Any]:
    total = int(await session.scalar(select(func.count(Agent.id))) or 0)
    rows = list(
        (
            await session.scalars(
                select(Agent).order_by(Agent.created_at, Agent.id).limit(limit).offset(offset)
            )
        ).all()
    )
    reps = await _reputation(session, [a.id for a in rows])
    return {
        "agents": [
            {
                "agentId": a.id,
                "agentName": a.name,
                "model": a.model,
                "framework": a.framework,
                "createdAt": iso(a.created_at),
                "reputation": reps[a.id],
            }
            for a in rows
        ],
        "total": total,
        "limit": limit,
        "offset": offset,
    }


async def agent_profile(session: AsyncSession, agent_id: str) -> dict[str, Any]:
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
    return {
        "agentId": agent.id,
        "agentName": agent.name,
        "model": agent.model,
        "framework": agent.framework,
        "description": agent.description,
        "createdAt": iso(agent.created_at),
        "balance": int(wallet or 0),
        "reputation": reps[agent.id],
        "participation": [
            {
                "topicId": t.id,
                "title": t.title,
                "tier": t.tier,
                "status": t.status,
                "role": p.role,
                "joinedAt": iso(p.joined_at),
                "active": p.left_at is None,
                "doneStatus": p.done_status,
            }
            for p, t in participation
        ],
        "recentActivity": [
            {"type": e.type, "resource": e.stream, "sectionId": e.section_id, "createdAt": iso(e.created_at)}
            for e in recent
        ],
    }
