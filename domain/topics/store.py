"""Topics: creation, listing, content, section tree, participants and events."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import Row, bindparam, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from domain.agents.models import Agent
from domain.consensus import sections
from domain.consensus.models import Proposal
from domain.consensus.policies import DEFAULT as DEFAULT_POLICY
from domain.consensus.policies import ApprovalPolicy
from domain.kernel import audit, events, sqlutil
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest, Conflict, Forbidden, NotFound
from domain.kernel.ids import canonical_id, new_id
from domain.kernel.settings import get_settings
from domain.kernel.sqlutil import for_update
from domain.topics import economy, queries, topic_events
from domain.topics.models import Topic, TopicDependency, TopicParticipant, TopicVote


class Tier(StrEnum):
    """How a topic's knowledge is grounded."""

    EMPIRICAL = "empirical"
    INSTITUTIONAL = "institutional"
    DERIVED = "derived"
    CONTESTED = "contested"


class TopicStatus(StrEnum):
    PROPOSED = "proposed"
    OPEN = "open"
    CONSENSUS = "consensus"
    STABLE = "stable"
    CHALLENGED = "challenged"
    REJECTED = "rejected"


class TopicVoteKind(StrEnum):
    """An agent's vote on a proposed topic: need_info names a prerequisite topic it must wait for."""

    APPROVE = "approve"
    REJECT = "reject"
    NEED_INFO = "need_info"


# A topic that reached agreement: a fact (the legislation API's facts and citations read these statuses).
REACHED = (TopicStatus.CONSENSUS, TopicStatus.STABLE)


# ISO 3166-1 country, optionally an ISO 3166-2 subdivision: AU, AU-NSW, FR-75; written in any case (the seed's
# topics took `au-nsw`), kept in capitals.
JURISDICTION = re.compile(r"^[A-Za-z]{2}(-[A-Za-z0-9]{1,3})?$")
DEPENDENCY_ORDER = (TopicDependency.created_at, TopicDependency.depends_on_id)


def normalise_jurisdiction(value: str | None, *, field: str = "jurisdiction") -> str | None:
    if value is None:
        return None
    if not JURISDICTION.match(value):
        raise BadRequest(
            f"{field} must look like AU or AU-NSW (an ISO 3166 country code, optionally a region code)",
            code="invalid_field",
            field=field,
        )
    return value.upper()


def stream(topic_id: str) -> str:
    return events.stream_of("topic", topic_id)


async def get(session: AsyncSession, topic_id: str) -> Topic:
    key = canonical_id(topic_id)
    topic = await session.get(Topic, key) if key else None
    if topic is None:
        raise NotFound(f"topic {topic_id!r} not found", code="topic_not_found")
    return topic


# Hot-path statements, built once and executed with parameters.
_LOCK_TOPIC = for_update(select(Topic).where(Topic.id == bindparam("p_topic")))
_PARTICIPANT = select(TopicParticipant.id).where(
    TopicParticipant.topic_id == bindparam("p_topic"),
    TopicParticipant.agent_id == bindparam("p_agent"),
    TopicParticipant.left_at.is_(None),
)


async def get_locked(session: AsyncSession, topic_id: str) -> Topic:
    """The topic, row-locked for the rest of the transaction, in one statement (404 if there is none)."""
    key = canonical_id(topic_id)
    topic: Topic | None = await session.scalar(_LOCK_TOPIC, {"p_topic": key}) if key else None
    if topic is None:
        raise NotFound(f"topic {topic_id!r} not found", code="topic_not_found")
    return topic


@dataclass(frozen=True)
class NewTopic:
    """What a new topic is made of (POST /api/pact/topics, or a need_info vote's prerequisite)."""

    title: str
    content: str
    tier: str
    depends_on: Sequence[str] = ()
    assumptions: Sequence[str] = ()
    canonical_claim: str | None = None
    jurisdiction: str | None = None
    authority: str | None = None
    source_ref: str | None = None
    effective_date: date | None = None
    expiry_date: date | None = None
    approval_policy: ApprovalPolicy = DEFAULT_POLICY
    allow_self_approval: bool = False


async def create(session: AsyncSession, ctx: Context, new: NewTopic) -> TopicView:
    actor = ctx.require_actor()
    title = new.title
    content = new.content
    jurisdiction = normalise_jurisdiction(new.jurisdiction)
    if new.effective_date and new.expiry_date and new.expiry_date < new.effective_date:
        raise BadRequest("expiryDate is before effectiveDate", code="invalid_field", field="expiryDate")
    depends_on = await _existing_dependencies(session, list(new.depends_on))
    await _check_civic_duty(session, actor.id)
    title_key = " ".join(title.casefold().split())
    if await session.scalar(select(Topic.id).where(Topic.title_key == title_key)):
        raise Conflict(f"a topic titled {title!r} already exists", code="duplicate_topic")
    now = utcnow()
    topic = Topic(
        id=new_id(),
        title=title,
        title_key=title_key,
        content=content if content.endswith("\n") else content + "\n",
        version=1,
        tier=new.tier,
        status="proposed",
        assumptions=list(new.assumptions),
        canonical_claim=new.canonical_claim,
        jurisdiction=jurisdiction,
        authority=new.authority,
        source_ref=new.source_ref,
        effective_date=new.effective_date,
        expiry_date=new.expiry_date,
        creator_id=actor.id,
        approval_policy=ApprovalPolicy(new.approval_policy).value,
        allow_self_approval=new.allow_self_approval,
        created_at=now,
        updated_at=now,
    )
    session.add(topic)
    try:
        await session.flush()
    except IntegrityError:
        raise Conflict(f"a topic titled {title!r} already exists", code="duplicate_topic") from None
    session.add(TopicParticipant(topic_id=topic.id, agent_id=actor.id, role="creator", joined_at=now))
    # The creator's approval is its first topic vote, as on the public hub.
    session.add(TopicVote(topic_id=topic.id, agent_id=actor.id, vote="approve", created_at=now))
    for n, dep in enumerate(depends_on):
        session.add(
            TopicDependency(
                topic_id=topic.id,
                depends_on_id=dep,
                relationship="builds_on",
                created_by=actor.id,
                created_at=now + timedelta(microseconds=n),  # reads list them in the order given
            )
        )
    await session.flush()
    events.append(session, stream(topic.id), "pact.topic.proposed", ctx, data={"title": title})
    await economy.reward(session, actor.id, economy.TOPIC_CREATE_REWARD, "topic.create", topic.id)
    found = await view(session, topic)
    audit.record(session, ctx, "topic.create", "topic", topic.id, after=topic_events.audit_view(topic))
    return found


async def _check_civic_duty(session: AsyncSession, agent_id: str) -> None:
    """Anti-abuse (off by default): after the first topic, each new one needs N topic votes cast."""
    duty = get_settings().civic_duty
    if not duty:
        return
    created = int(await session.scalar(select(func.count(Topic.id)).where(Topic.creator_id == agent_id)) or 0)
    cast = int(
        await session.scalar(
            select(func.count(TopicVote.id))
            .join(Topic, Topic.id == TopicVote.topic_id)
            .where(TopicVote.agent_id == agent_id, Topic.creator_id != agent_id)
        )
        or 0
    )
    if created >= 1 and cast < created * duty:
        raise Forbidden(
            f"civic duty: cast {created * duty - cast} more topic votes on others' topics first",
            code="civic_duty",
            votesNeeded=created * duty - cast,
        )


async def _existing_dependencies(session: AsyncSession, given: list[str]) -> list[str]:
    """The canonical ids of `given` (order kept, repeats dropped), or 400 naming those not found."""
    wanted = list(dict.fromkeys(canonical_id(d) or d for d in given))
    ids = [d for d in wanted if canonical_id(d)]
    found = set((await session.scalars(select(Topic.id).where(Topic.id.in_(ids)))).all()) if ids else set()
    missing = [d for d in wanted if d not in found]
    if missing:
        raise BadRequest(
            f"dependsOn names topics that do not exist: {', '.join(missing)}",
            code="invalid_field",
            field="dependsOn",
            missing=missing,
        )
    return wanted


async def view(session: AsyncSession, topic: Topic) -> TopicView:
    counts = (await _counts(session, [topic.id])).get(topic.id, {})
    deps = (
        await session.scalars(
            select(TopicDependency.depends_on_id)
            .where(TopicDependency.topic_id == topic.id)
            .order_by(*DEPENDENCY_ORDER)
        )
    ).all()
    return TopicView(topic, counts.get("participants", 0), counts.get("proposals", 0), list(deps))


async def _counts(session: AsyncSession, topic_ids: list[str]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {t: {} for t in topic_ids}
    if not topic_ids:
        return out
    for tid, n in await session.execute(
        select(TopicParticipant.topic_id, func.count())
        .where(TopicParticipant.topic_id.in_(topic_ids), TopicParticipant.left_at.is_(None))
        .group_by(TopicParticipant.topic_id)
    ):
        out[tid]["participants"] = n
    for tid, n in await session.execute(
        select(Proposal.resource_id, func.count())
        .where(Proposal.resource_type == "topic", Proposal.resource_id.in_(topic_ids))
        .group_by(Proposal.resource_id)
    ):
        out[tid]["proposals"] = n
    return out


async def list_topics(
    conn: AsyncConnection,
    *,
    tier: str | None,
    status: str | None,
    jurisdiction: str | None,
    limit: int,
    offset: int,
) -> TopicPage:
    """One page of the topics, newest first, with how many match (on a bare connection: Core rows): on
    PostgreSQL one statement (each row carries the total and its dependencies; the total is counted apart
    only when a page past the end comes back empty), on SQLite the count, the page and its dependencies."""
    statements = queries.topic_list(
        bool(tier), bool(status), bool(jurisdiction), postgresql=conn.dialect.name == "postgresql"
    )
    params: dict[str, Any] = {"p_tier": tier, "p_status": status, "p_limit": limit, "p_offset": offset}
    if jurisdiction:
        params["p_jurisdiction"] = j = normalise_jurisdiction(jurisdiction)
        params["p_region"] = f"{j}-%"
    if statements.whole_page:
        rows = (await conn.execute(statements.page, params)).all()
        if rows:
            total = int(rows[0].total)
        else:  # none match, or the offset is past the end: no row carries the count
            total = int(await conn.scalar(statements.total, params) or 0) if offset > 0 else 0
        items = [TopicView(t, t.participants, t.proposals, list(t.depends_on or ())) for t in rows]
        return TopicPage(items, total, limit, offset)
    total = int(await conn.scalar(statements.total, params) or 0)
    rows = (await conn.execute(statements.page, params)).all()
    deps: dict[str, list[str]] = {t.id: [] for t in rows}
    if rows:
        for tid, dep in await conn.execute(queries.DEPENDENCIES_OF, {"p_topics": list(deps)}):
            deps[tid].append(dep)
    items = [TopicView(t, t.participants, t.proposals, deps[t.id]) for t in rows]
    return TopicPage(items, total, limit, offset)


@dataclass(frozen=True)
class TopicView:
    """A topic as the API shows it: its row (the model, or the list's row of its columns without the content),
    its active participants, its proposals and the topics it depends on, in the order they were linked."""

    topic: Topic | Row[*tuple[Any, ...]]
    participants: int
    proposals: int
    depends_on: list[str]


@dataclass(frozen=True)
class TopicPage:
    """One page of the topic list, and how many topics match in all."""

    topics: list[TopicView]
    total: int
    limit: int
    offset: int


@dataclass(frozen=True)
class Dependency:
    """A topic depended on, directly (depth 1) or through others, and how: `topic` is the row of the columns
    a content read shows of it (queries.DEPENDED_ON)."""

    topic: Row[*tuple[Any, ...]]
    relationship: str
    depth: int


@dataclass(frozen=True)
class TopicContent:
    """A topic's Markdown (followed by its dependencies' when they were resolved) and what it is of: `topic`
    is the row of the columns it reads; `resolved` is None unless the dependencies were asked for."""

    topic: Row[*tuple[Any, ...]]
    content: str
    resolved: list[Dependency] | None


async def content(conn: AsyncConnection, topic_id: str, *, resolve: bool) -> TopicContent:
    key = canonical_id(topic_id)
    topic = (await conn.execute(queries.CONTENT, {"p_topic": key})).first() if key else None
    if topic is None:
        raise NotFound(f"topic {topic_id!r} not found", code="topic_not_found")
    if not resolve:
        return TopicContent(topic, topic.content, None)
    resolved = await _resolve_dependencies(conn, topic.id)
    parts = [topic.content.rstrip("\n")]
    for dep in resolved:
        parts.append(
            f"\n---\n\n<!-- dependency topic:{dep.topic.id} "
            f"({dep.relationship}, depth {dep.depth}) -->\n\n" + dep.topic.content.rstrip("\n")
        )
    return TopicContent(topic, "\n".join(parts) + "\n", resolved)


async def _resolve_dependencies(conn: AsyncConnection, topic_id: str) -> list[Dependency]:
    """Every topic this one depends on, transitively, breadth-first, each once."""
    seen = {topic_id}
    frontier = [topic_id]
    out: list[Dependency] = []
    depth = 0
    while frontier:
        depth += 1
        rows = (await conn.execute(queries.DEPENDED_ON, {"p_topics": frontier})).all()
        frontier = []
        for dep in rows:
            if dep.id in seen:
                continue
            seen.add(dep.id)
            frontier.append(dep.id)
            out.append(Dependency(dep, dep.relationship, depth))
    return out


@dataclass(frozen=True)
class SectionTree:
    """A topic's section tree at its version: `sections` are the shared section parser's nodes
    (domain/consensus/sections.py `tree`, with their content)."""

    topic_id: str
    version: int
    sections: list[dict[str, Any]]


async def section_tree(conn: AsyncConnection, topic_id: str) -> SectionTree:
    key = canonical_id(topic_id)
    topic = (await conn.execute(queries.SECTION_SOURCE, {"p_topic": key})).first() if key else None
    if topic is None:
        raise NotFound(f"topic {topic_id!r} not found", code="topic_not_found")
    return SectionTree(topic.id, topic.version, sections.tree(topic.content, with_content=True))


@dataclass(frozen=True)
class Participant:
    """An agent on a topic: its participation (role, join, leave, done signal) and the agent."""

    participation: TopicParticipant
    agent: Agent


async def participants(session: AsyncSession, topic_id: str) -> list[Participant]:
    topic = await get(session, topic_id)
    rows = (
        await session.execute(
            select(TopicParticipant, Agent)
            .join(Agent, Agent.id == TopicParticipant.agent_id)
            .where(TopicParticipant.topic_id == topic.id)
            .order_by(TopicParticipant.joined_at, TopicParticipant.id)
        )
    ).all()
    return [Participant(p, a) for p, a in rows]


@dataclass(frozen=True)
class Joined:
    """An agent's join of a topic: the topic, the agent, its participation, and whether it had joined (and
    not left) before this call."""

    topic: Topic
    agent_id: str
    agent_name: str
    participation: TopicParticipant
    already_joined: bool


async def join(session: AsyncSession, ctx: Context, topic_id: str) -> Joined:
    """Idempotent: the first join (or a re-join after leaving) records one event; repeats change nothing.

    Both steps are single conditional statements, so concurrent joins of one agent cannot both count."""
    actor = ctx.require_actor()
    topic = await get(session, topic_id)
    row, joined = await admit(session, ctx, topic)
    if joined:
        events.append(session, stream(topic.id), "pact.agent.joined", ctx, data={"role": row.role})
        audit.record(
            session, ctx, "topic.join", "topic", topic.id, after=topic_events.joined(row.agent_id, row.role)
        )
    return Joined(topic, actor.id, actor.name, row, not joined)


async def admit(session: AsyncSession, ctx: Context, topic: Topic) -> tuple[TopicParticipant, bool]:
    """The acting agent's participation in the topic, and whether this call made it (a first join or a
    re-join after leaving); no event: the join records `pact.agent.joined`, an onboarding
    `pact.fabric.onboarded` instead (PACT §4.4.5)."""
    actor = ctx.require_actor()
    mine = (TopicParticipant.topic_id == topic.id, TopicParticipant.agent_id == actor.id)
    inserted = await session.scalar(
        sqlutil.insert(session, TopicParticipant)
        .values(topic_id=topic.id, agent_id=actor.id, role="collaborator", joined_at=utcnow())
        .on_conflict_do_nothing()
        .returning(TopicParticipant.id)
    )
    rejoined = None
    if inserted is None:
        rejoined = await session.scalar(
            update(TopicParticipant)
            .where(*mine, TopicParticipant.left_at.is_not(None), TopicParticipant.removed_at.is_(None))
            .values(left_at=None)
            .returning(TopicParticipant.id)
        )
    row = (await session.execute(select(TopicParticipant).where(*mine))).scalar_one()
    if row.removed_at is not None:  # a reviewer removed it (PACT §9.2): only a reviewer lets it back
        raise Forbidden(
            f"a reviewer removed this agent from the topic: “{row.removal_note}”. It may join again once a "
            "reviewer readmits it",
            code="removed_by_reviewer",
        )
    return row, inserted is not None or rejoined is not None


async def is_participant(session: AsyncSession, topic_id: str, agent_id: str) -> bool:
    return bool(await session.scalar(_PARTICIPANT, {"p_topic": topic_id, "p_agent": agent_id}))


async def joined(session: AsyncSession, ctx: Context, topic_id: str) -> Topic:
    """The topic, once the acting agent is one of its participants (403 otherwise)."""
    topic = await get(session, topic_id)
    if not await is_participant(session, topic.id, ctx.require_actor().id):
        raise Forbidden("join the topic first (POST /api/pact/{topicId}/join)", code="not_joined")
    return topic


async def event_stream(session: AsyncSession, topic_id: str) -> str:
    """The name of the topic's event stream, for its live events (404 as its event list)."""
    topic = await get(session, topic_id)
    return stream(topic.id)


@dataclass(frozen=True)
class TopicEvents:
    """A page of the topic's events, as the event log pages them (domain/kernel/events.py `page`)."""

    topic_id: str
    page: events.Page


async def event_page(session: AsyncSession, topic_id: str, *, after: str | None, limit: int) -> TopicEvents:
    """The topic's events after the cursor `after` (`n` or `evt_n`)."""
    topic = await get(session, topic_id)
    start = events.parse_cursor(after, field="after")
    return TopicEvents(topic.id, await events.page(session, stream(topic.id), after=start, limit=limit))
