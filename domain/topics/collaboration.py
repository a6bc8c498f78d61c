"""Collaboration records on a topic: intents, constraints, salience, dependencies, assumptions, verify."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from domain.agents.models import Agent
from domain.consensus import engine as consensus
from domain.consensus import escalations, sections
from domain.kernel import audit, events
from domain.kernel.clock import canonical_id, iso, utcnow
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest, Conflict, Forbidden, NotFound
from domain.kernel.sqlutil import for_update
from domain.topics import consensus as topic_consensus
from domain.topics import economy
from domain.topics import store as topics
from domain.topics.models import (
    Topic,
    TopicConstraint,
    TopicDependency,
    TopicIntent,
    TopicParticipant,
    TopicSalience,
    TopicVerification,
)


async def _joined_topic(session: AsyncSession, ctx: Context, topic_id: str) -> Topic:
    topic = await topics.get(session, topic_id)
    if not await topics.is_participant(session, topic.id, ctx.require_actor().id):
        raise Forbidden("join the topic first (POST /api/pact/{topicId}/join)", code="not_joined")
    return topic


def _require_section(topic: Topic, section_id: str) -> None:
    if sections.find(topic.content, section_id) is None:
        raise NotFound(
            f"section {section_id} does not exist on this topic", code="section_not_found", field="sectionId"
        )


async def declare_intent(
    session: AsyncSession, ctx: Context, topic_id: str, data: dict[str, Any]
) -> dict[str, Any]:
    topic = await _joined_topic(session, ctx, topic_id)
    _require_section(topic, data["sectionId"])
    row = TopicIntent(
        topic_id=topic.id,
        agent_id=ctx.require_actor().id,
        section_id=data["sectionId"],
        goal=data["goal"],
        category=data.get("category") or "general",
        created_at=utcnow(),
    )
    session.add(row)
    await session.flush()
    out = _intent(row, ctx.require_actor().name)
    await events.append(
        session,
        topics.stream(topic.id),
        "pact.intent.declared",
        ctx,
        section_id=row.section_id,
        data={"intentId": row.id, "goal": row.goal},
    )
    await audit.record(session, ctx, "intent.declare", "intent", row.id, after=out)
    return out


def _intent(row: TopicIntent, name: str) -> dict[str, Any]:
    return {
        "id": row.id,
        "topicId": row.topic_id,
        "sectionId": row.section_id,
        "goal": row.goal,
        "category": row.category,
        "agentId": row.agent_id,
        "agentName": name,
        "createdAt": iso(row.created_at),
    }


async def list_intents(session: AsyncSession, topic_id: str, section_id: str | None) -> dict[str, Any]:
    topic = await topics.get(session, topic_id)
    stmt = (
        select(TopicIntent, Agent.name)
        .join(Agent, Agent.id == TopicIntent.agent_id)
        .where(TopicIntent.topic_id == topic.id)
    )
    if section_id:
        stmt = stmt.where(TopicIntent.section_id == section_id)
    rows = (await session.execute(stmt.order_by(TopicIntent.created_at, TopicIntent.id))).all()
    return {"topicId": topic.id, "intents": [_intent(r, n) for r, n in rows]}


async def publish_constraint(
    session: AsyncSession, ctx: Context, topic_id: str, data: dict[str, Any]
) -> dict[str, Any]:
    topic = await _joined_topic(session, ctx, topic_id)
    _require_section(topic, data["sectionId"])
    row = TopicConstraint(
        topic_id=topic.id,
        agent_id=ctx.require_actor().id,
        section_id=data["sectionId"],
        boundary=data["boundary"],
        category=data.get("category") or "general",
        created_at=utcnow(),
    )
    session.add(row)
    await session.flush()
    out = _constraint(row, ctx.require_actor().name)
    await events.append(
        session,
        topics.stream(topic.id),
        "pact.constraint.published",
        ctx,
        section_id=row.section_id,
        data={"constraintId": row.id, "boundary": row.boundary},
    )
    await audit.record(session, ctx, "constraint.publish", "constraint", row.id, after=out)
    return out


def _constraint(row: TopicConstraint, name: str) -> dict[str, Any]:
    return {
        "id": row.id,
        "topicId": row.topic_id,
        "sectionId": row.section_id,
        "boundary": row.boundary,
        "category": row.category,
        "agentId": row.agent_id,
        "agentName": name,
        "createdAt": iso(row.created_at),
    }


async def list_constraints(session: AsyncSession, topic_id: str, section_id: str | None) -> dict[str, Any]:
    topic = await topics.get(session, topic_id)
    stmt = (
        select(TopicConstraint, Agent.name)
        .join(Agent, Agent.id == TopicConstraint.agent_id)
        .where(TopicConstraint.topic_id == topic.id)
    )
    if section_id:
        stmt = stmt.where(TopicConstraint.section_id == section_id)
    rows = (await session.execute(stmt.order_by(TopicConstraint.created_at, TopicConstraint.id))).all()
    return {"topicId": topic.id, "constraints": [_constraint(r, n) for r, n in rows]}


async def set_salience(
    session: AsyncSession, ctx: Context, topic_id: str, data: dict[str, Any]
) -> dict[str, Any]:
    actor = ctx.require_actor()
    topic = await _joined_topic(session, ctx, topic_id)
    # Lock the topic first: two first scores by one agent at once would otherwise both insert.
    topic = await session.scalar(for_update(select(Topic).where(Topic.id == topic.id))) or topic
    _require_section(topic, data["sectionId"])
    row = await session.scalar(
        for_update(
            select(TopicSalience).where(
                TopicSalience.topic_id == topic.id,
                TopicSalience.agent_id == actor.id,
                TopicSalience.section_id == data["sectionId"],
            )
        )
    )
    before = row.score if row else None
    if row is None:
        row = TopicSalience(
            topic_id=topic.id,
            agent_id=actor.id,
            section_id=data["sectionId"],
            score=data["score"],
            updated_at=utcnow(),
        )
        session.add(row)
        try:
            async with session.begin_nested():
                await session.flush()
        except IntegrityError:  # set concurrently by the same agent: last write wins
            row = await session.scalar(
                select(TopicSalience).where(
                    TopicSalience.topic_id == topic.id,
                    TopicSalience.agent_id == actor.id,
                    TopicSalience.section_id == data["sectionId"],
                )
            )
            assert row is not None
    row.score = data["score"]
    row.updated_at = utcnow()
    await events.append(
        session,
        topics.stream(topic.id),
        "pact.salience.updated",
        ctx,
        section_id=row.section_id,
        data={"score": row.score, "previous": before},
    )
    await audit.record(
        session,
        ctx,
        "salience.set",
        "salience",
        f"{topic.id}:{row.section_id}",
        before={"score": before} if before is not None else None,
        after={"score": row.score},
    )
    return {
        "topicId": topic.id,
        "sectionId": row.section_id,
        "agentId": actor.id,
        "score": row.score,
        "previousScore": before,
    }


async def salience_map(session: AsyncSession, topic_id: str) -> dict[str, Any]:
    topic = await topics.get(session, topic_id)
    rows = (
        await session.execute(
            select(TopicSalience, Agent.name)
            .join(Agent, Agent.id == TopicSalience.agent_id)
            .where(TopicSalience.topic_id == topic.id)
            .order_by(TopicSalience.id)
        )
    ).all()
    by_section: dict[str, list[dict[str, Any]]] = {}
    for row, name in rows:
        by_section.setdefault(row.section_id, []).append(
            {"agentId": row.agent_id, "agentName": name, "score": row.score}
        )
    out = []
    for sec in sections.parse(topic.content):
        entries = by_section.pop(sec.id, [])
        out.append(
            {
                "sectionId": sec.id,
                "title": sec.title,
                "scores": entries,
                "average": round(sum(e["score"] for e in entries) / len(entries), 2) if entries else None,
            }
        )
    for sid, entries in by_section.items():  # scores on sections that have since been renamed or removed
        out.append(
            {
                "sectionId": sid,
                "title": None,
                "stale": True,
                "scores": entries,
                "average": round(sum(e["score"] for e in entries) / len(entries), 2),
            }
        )
    return {"topicId": topic.id, "sections": out}


# Key of the PostgreSQL advisory lock that serialises changes to the dependency graph.
_GRAPH_LOCK = 0x636F6E636F7264  # "concord"


async def lock_graph(session: AsyncSession) -> None:
    """Serialise dependency additions for the rest of this transaction.

    Locking the two topics of an edge is not enough: A→B and B→C→A added at once lock disjoint rows and
    each sees no cycle. The graph is small and changes rarely, so one transaction-scoped lock is cheap.
    On SQLite the writer's BEGIN IMMEDIATE already serialises.
    """
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        await session.execute(select(func.pg_advisory_xact_lock(_GRAPH_LOCK)))


async def refuse_cycle(session: AsyncSession, topic_id: str, depends_on: str) -> None:
    """Adding topic → depends_on must keep the graph acyclic: depends_on may not reach topic_id.

    Takes the graph lock first, so the check sees every committed edge and no other addition can
    commit between this check and the caller's insert.
    """
    await lock_graph(session)
    frontier, seen, parent = [depends_on], {depends_on}, {depends_on: None}
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
                while parent.get(node):
                    node = parent[node]
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


async def add_dependency(
    session: AsyncSession, ctx: Context, topic_id: str, data: dict[str, Any]
) -> dict[str, Any]:
    topic = await _joined_topic(session, ctx, topic_id)
    target_id = canonical_id(data["dependsOn"])
    target = await session.get(Topic, target_id) if target_id else None
    if target is None:
        raise NotFound(
            f"dependsOn topic {data['dependsOn']} not found", code="topic_not_found", field="dependsOn"
        )
    if target.id == topic.id:
        raise BadRequest("a topic cannot depend on itself", code="invalid_field", field="dependsOn")
    await session.scalar(for_update(select(Topic.id).where(Topic.id == topic.id)))
    await lock_graph(session)  # before the existence check too: two identical additions at once
    if await session.scalar(
        select(TopicDependency.id).where(
            TopicDependency.topic_id == topic.id, TopicDependency.depends_on_id == target.id
        )
    ):
        raise Conflict("this dependency already exists", code="dependency_exists")
    await refuse_cycle(session, topic.id, target.id)
    row = TopicDependency(
        topic_id=topic.id,
        depends_on_id=target.id,
        relationship=data.get("relationship") or "builds_on",
        justification=data["justification"],
        created_by=ctx.require_actor().id,
        created_at=utcnow(),
    )
    session.add(row)
    await session.flush()
    out = _dependency(row, target)
    await events.append(
        session,
        topics.stream(topic.id),
        "pact.dependency.declared",
        ctx,
        data={"dependsOn": target.id, "relationship": row.relationship},
    )
    await audit.record(session, ctx, "dependency.add", "dependency", row.id, after=out)
    return out


def _dependency(row: TopicDependency, other: Topic) -> dict[str, Any]:
    return {
        "id": row.id,
        "topicId": row.topic_id,
        "dependsOn": row.depends_on_id,
        "relationship": row.relationship,
        "justification": row.justification,
        "title": other.title,
        "tier": other.tier,
        "status": other.status,
        "createdAt": iso(row.created_at),
    }


async def dependencies(session: AsyncSession, topic_id: str) -> dict[str, Any]:
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
    return {
        "topicId": topic.id,
        "dependsOn": [_dependency(r, t) for r, t in outgoing],
        "dependedOnBy": [{**_dependency(r, t), "topicId": t.id} for r, t in incoming],
    }


async def assumptions(session: AsyncSession, topic_id: str) -> dict[str, Any]:
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
    return {
        "topicId": topic.id,
        "assumptions": topic.assumptions or [],
        "declaredByAgents": [
            {"agentId": p.agent_id, "agentName": n, "assumptions": p.done_assumptions}
            for p, n in declared
            if p.done_assumptions
        ],
        "assumedTopics": [_dependency(r, t) for r, t in assumed],
    }


async def verify(session: AsyncSession, ctx: Context, topic_id: str, data: dict[str, Any]) -> dict[str, Any]:
    actor = ctx.require_actor()
    topic = await _joined_topic(session, ctx, topic_id)
    topic = await session.scalar(for_update(select(Topic).where(Topic.id == topic.id))) or topic
    first = not await session.scalar(
        select(TopicVerification.id).where(
            TopicVerification.topic_id == topic.id, TopicVerification.agent_id == actor.id
        )
    )
    row = TopicVerification(
        topic_id=topic.id,
        agent_id=actor.id,
        status=data["status"],
        notes=data.get("notes"),
        created_at=utcnow(),
    )
    session.add(row)
    before = topic.status
    now = utcnow()
    topic.last_verified_at = now
    if data["status"] in ("amended", "repealed") and topic.status in ("open", "consensus", "stable"):
        topic.status = "challenged"
        topic.consensus_since = None
        await events.append(
            session,
            topics.stream(topic.id),
            "pact.consensus.challenged",
            ctx,
            data={"verification": data["status"], "notes": data.get("notes")},
        )
    topic.updated_at = now
    if first:  # one reward per agent and topic: verifying again is welcome but not paid again
        amount = economy.VERIFY_CURRENT if data["status"] == "current" else economy.VERIFY_CHANGED
        await economy.reward(session, actor.id, amount, f"topic.verify.{data['status']}", topic.id)
    await session.flush()
    await events.append(
        session,
        topics.stream(topic.id),
        "pact.topic.re-verified",
        ctx,
        data={"status": data["status"], "notes": data.get("notes")},
    )
    await audit.record(
        session,
        ctx,
        "topic.verify",
        "topic",
        topic.id,
        before={"status": before},
        after={"status": topic.status, "verification": data["status"]},
    )
    return {
        "topicId": topic.id,
        "verificationId": row.id,
        "verification": data["status"],
        "notes": row.notes,
        "topicStatus": topic.status,
        "lastVerifiedAt": iso(now),
        "rewarded": first,
    }


async def escalate(
    session: AsyncSession, ctx: Context, topic_id: str, data: dict[str, Any]
) -> dict[str, Any]:
    """Raise a question for human reviewers; a named section or proposal must belong to this topic."""
    topic = await topics.get(session, topic_id)
    if data.get("sectionId") and sections.find(topic.content, data["sectionId"]) is None:
        raise NotFound(
            f"section {data['sectionId']} does not exist on this topic",
            code="section_not_found",
            field="sectionId",
        )
    if data.get("proposalId"):
        await consensus.get_proposal(
            session, topic_consensus.TopicResource(topic), data["proposalId"], lock=False
        )
    return await escalations.create(
        session,
        ctx,
        resource_type="topic",
        resource_id=topic.id,
        message=data["message"],
        section_id=data.get("sectionId"),
        proposal_id=data.get("proposalId"),
        priority=data.get("priority") or "normal",
    )
