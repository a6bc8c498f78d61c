"""Dependencies between topics: a directed graph that stays acyclic, and the topics' assumptions."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.agents.models import Agent
from domain.kernel import audit, events
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest, Conflict, NotFound
from domain.kernel.ids import canonical_id
from domain.kernel.sqlutil import for_update
from domain.topics import queries, topic_events
from domain.topics import store as topics
from domain.topics.models import Topic, TopicDependency, TopicParticipant

# Key of the PostgreSQL advisory lock that serialises changes to the dependency graph.


@dataclass(frozen=True)
class TopicRef:
    id: str
    title: str
    tier: str
    status: str


@dataclass(frozen=True)
class Edge:
    """A dependency `topic_id` → `depends_on_id`, with the topic at its other end as seen from where it
    was listed (the depended-on topic in a topic's own list, the dependant in the reverse list)."""

    id: str
    topic_id: str
    depends_on_id: str
    relationship: str
    justification: str | None
    created_at: datetime
    other: TopicRef


@dataclass(frozen=True)
class Dependencies:
    topic_id: str
    depends_on: list[Edge]
    depended_on_by: list[Edge]


@dataclass(frozen=True)
class AgentAssumptions:
    agent_id: str
    agent_name: str
    assumptions: list[str]


@dataclass(frozen=True)
class Assumptions:
    topic_id: str
    assumptions: list[str]
    declared_by_agents: list[AgentAssumptions]
    assumed_topics: list[Edge]


async def lock_graph(session: AsyncSession) -> None:
    """Serialise dependency additions for the rest of this transaction.

    Locking the two topics of an edge is not enough: A→B and B→C→A added at once lock disjoint rows and
    each sees no cycle. The graph is small and changes rarely, so one transaction-scoped lock is cheap.
    On SQLite the writer's BEGIN IMMEDIATE already serialises.
    """
    await queries.lock_dependency_graph(session)


async def refuse_cycle(session: AsyncSession, topic_id: str, depends_on: str) -> None:
    """Adding topic → depends_on must keep the graph acyclic: depends_on may not reach topic_id.

    Takes the graph lock first, so the check sees every committed edge and no other addition can
    commit between this check and the caller's insert.
    """
    await lock_graph(session)
    frontier, seen = [depends_on], {depends_on}
    parent: dict[str, str | None] = {depends_on: None}
    while frontier:
        rows = (
            await session.execute(
                select(TopicDependency.topic_id, TopicDependency.depends_on_id).where(
                    TopicDependency.topic_id.in_(frontier)
                )
            )
        ).all()
        frontier = []
        for src, dst in rows:
            if dst == topic_id:
                path, node = [topic_id, src], src
                while (up := parent.get(node)) is not None:
                    node = up
                    path.append(node)
                raise Conflict(
                    "this dependency would create a cycle",
                    code="dependency_cycle",
                    cycle=[topic_id, *reversed(path[1:]), topic_id],
                )
            if dst not in seen:
                seen.add(dst)
                parent[dst] = src
                frontier.append(dst)


async def link(
    session: AsyncSession,
    ctx: Context,
    topic_id: str,
    depends_on_id: str,
    *,
    relationship: str,
    justification: str | None,
) -> TopicDependency | None:
    """Add the edge topic → depends_on unless it exists (None then); 409 if it would close a cycle."""
    if depends_on_id == topic_id:
        raise BadRequest("a topic cannot depend on itself", code="invalid_field", field="dependsOn")
    await lock_graph(session)  # before the existence check too: two identical additions at once
    if await session.scalar(
        select(TopicDependency.id).where(
            TopicDependency.topic_id == topic_id, TopicDependency.depends_on_id == depends_on_id
        )
    ):
        return None
    await refuse_cycle(session, topic_id, depends_on_id)
    row = TopicDependency(
        topic_id=topic_id,
        depends_on_id=depends_on_id,
        relationship=relationship,
        justification=justification,
        created_by=ctx.require_actor().id,
        created_at=utcnow(),
    )
    session.add(row)
    await session.flush()
    events.append(
        session,
        topics.stream(topic_id),
        "pact.dependency.declared",
        ctx,
        data=topic_events.dependency_declared(depends_on_id, relationship),
    )
    return row


async def add(
    session: AsyncSession,
    ctx: Context,
    topic_id: str,
    *,
    depends_on: str,
    relationship: str,
    justification: str,
) -> Edge:
    topic = await topics.joined(session, ctx, topic_id)
    target_id = canonical_id(depends_on)
    target = await session.get(Topic, target_id) if target_id else None
    if target is None:
        raise NotFound(f"dependsOn topic {depends_on} not found", code="topic_not_found", field="dependsOn")
    await session.scalar(for_update(select(Topic.id).where(Topic.id == topic.id)))
    row = await link(
        session, ctx, topic.id, target.id, relationship=relationship, justification=justification
    )
    if row is None:
        raise Conflict("this dependency already exists", code="dependency_exists")
    edge = _edge(row, target)
    audit.record(
        session,
        ctx,
        "dependency.add",
        "dependency",
        row.id,
        after=topic_events.dependency_added(row),
    )
    return edge


async def of_topic(session: AsyncSession, topic_id: str) -> Dependencies:
    topic = await topics.get(session, topic_id)
    outgoing = (
        await session.execute(
            select(TopicDependency, Topic)
            .join(Topic, Topic.id == TopicDependency.depends_on_id)
            .where(TopicDependency.topic_id == topic.id)
            .order_by(TopicDependency.created_at)
        )
    ).all()
    incoming = (
        await session.execute(
            select(TopicDependency, Topic)
            .join(Topic, Topic.id == TopicDependency.topic_id)
            .where(TopicDependency.depends_on_id == topic.id)
            .order_by(TopicDependency.created_at)
        )
    ).all()
    return Dependencies(
        topic_id=topic.id,
        depends_on=[_edge(r, t) for r, t in outgoing],
        depended_on_by=[_edge(r, t) for r, t in incoming],
    )


async def assumptions(session: AsyncSession, topic_id: str) -> Assumptions:
    """The topic's own assumptions, those its agents declared when signalling done, and the topics it
    depends on with the `assumes` relationship."""
    topic = await topics.get(session, topic_id)
    declared = (
        await session.execute(
            select(TopicParticipant, Agent.name)
            .join(Agent, Agent.id == TopicParticipant.agent_id)
            .where(TopicParticipant.topic_id == topic.id, TopicParticipant.done_assumptions.is_not(None))
        )
    ).all()
    assumed = (
        await session.execute(
            select(TopicDependency, Topic)
            .join(Topic, Topic.id == TopicDependency.depends_on_id)
            .where(TopicDependency.topic_id == topic.id, TopicDependency.relationship == "assumes")
        )
    ).all()
    return Assumptions(
        topic_id=topic.id,
        assumptions=list(topic.assumptions or []),
        declared_by_agents=[
            AgentAssumptions(p.agent_id, name, list(p.done_assumptions))
            for p, name in declared
            if p.done_assumptions
        ],
        assumed_topics=[_edge(r, t) for r, t in assumed],
    )


def _edge(row: TopicDependency, other: Topic) -> Edge:
    return Edge(
        id=row.id,
        topic_id=row.topic_id,
        depends_on_id=row.depends_on_id,
        relationship=row.relationship,
        justification=row.justification,
        created_at=row.created_at,
        other=TopicRef(other.id, other.title, other.tier, other.status),
    )
