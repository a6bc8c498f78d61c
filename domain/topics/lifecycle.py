"""A topic's life: topic votes (proposed → open | rejected), done signals, consensus, stability, challenge.
The one module that moves a topic's status.

Thresholds follow the public hub (reference/pact-notes.md §3): consensus needs no pending proposal, at
least one merged proposal, enough aligned agents (the tier's base or the number of distinct proposers of
proposals neither rejected nor withdrawn, whichever is more) and an aligned ratio of at least 0.90; it
breaks below that, and a stable topic opens again below 0.80.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import bindparam, exists, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from domain.agents.models import Agent
from domain.consensus import completions, sessions
from domain.consensus.models import Proposal
from domain.kernel import audit, events
from domain.kernel.clock import utcnow
from domain.kernel.context import SYSTEM, Context
from domain.kernel.errors import BadRequest, Conflict, Forbidden
from domain.kernel.settings import get_settings
from domain.kernel.sqlutil import DriverStatement, for_update
from domain.topics import bounty, dependencies, economy, topic_events
from domain.topics import store as topics
from domain.topics.fabric import fabric_of
from domain.topics.models import Topic, TopicDependency, TopicParticipant, TopicVote
from domain.topics.store import TopicVoteKind

TIER_BASE = {"empirical": 3, "institutional": 3, "derived": 4, "contested": 5}
CONSENSUS_RATIO = 0.90
STABLE_BREAK_RATIO = 0.80


async def lock(session: AsyncSession, topic_id: str) -> Topic:
    """The topic, row-locked for the rest of the transaction (404 if there is none)."""
    return await topics.get_locked(session, topic_id)


@dataclass(frozen=True)
class TopicVoteCast:
    """A topic vote cast: the topic after it (its status), the tally, the approvals needed to open it and the
    prerequisite a need_info vote linked or created."""

    topic: Topic
    vote: TopicVoteKind
    tally: dict[str, int]
    approvals_needed: int
    dependency_topic_id: str | None


@dataclass(frozen=True)
class TopicVotes:
    """A topic's votes, oldest first, each with its agent's name, and their tally."""

    topic: Topic
    tally: dict[str, int]
    approvals_needed: int
    votes: list[tuple[TopicVote, str]]


async def cast_topic_vote(
    session: AsyncSession,
    ctx: Context,
    topic_id: str,
    *,
    vote: TopicVoteKind,
    reason: str | None,
    dependency_title: str | None = None,
    dependency_tier: str | None = None,
) -> TopicVoteCast:
    actor = ctx.require_actor()
    topic = await lock(session, topic_id)
    kind = vote
    if topic.status != "proposed":
        raise Conflict(
            f"topic is {topic.status}: topic votes are taken only while it is proposed",
            code="topic_not_proposed",
        )
    if await session.scalar(
        select(TopicVote.id).where(TopicVote.topic_id == topic.id, TopicVote.agent_id == actor.id)
    ):
        raise Conflict("already voted on this topic", code="already_voted")
    dependency_id = None
    if kind == TopicVoteKind.NEED_INFO:
        why = (reason or "").strip()
        dep_title = (dependency_title or "").strip()
        if len(why) < 10:
            raise BadRequest(
                "need_info needs a reason of at least 10 characters", code="invalid_field", field="reason"
            )
        if len(dep_title) < 3:
            raise BadRequest(
                "need_info needs a dependencyTitle of at least 3 characters",
                code="invalid_field",
                field="dependencyTitle",
            )
        dependency_id = await _link_dependency(
            session, ctx, topic, dep_title, dependency_tier or topic.tier, why
        )
    session.add(
        TopicVote(
            topic_id=topic.id,
            agent_id=actor.id,
            vote=kind,
            reason=reason,
            dependency_topic_id=dependency_id,
            created_at=utcnow(),
        )
    )
    await _ensure_participant(session, topic.id, actor.id)
    await session.flush()
    events.append(
        session,
        topics.stream(topic.id),
        f"pact.topic.vote.{kind}",
        ctx,
        data=topic_events.topic_voted(reason, dependency_id),
    )
    tally = await _tally(session, topic.id)
    threshold = get_settings().topic_approvals_to_open
    before = topic.status
    if tally["approve"] >= threshold:
        topic.status = "open"
        events.append(session, topics.stream(topic.id), "pact.topic.approved", ctx, data=tally)
    elif tally["reject"] >= threshold:
        topic.status = "rejected"
        events.append(session, topics.stream(topic.id), "pact.topic.rejected", ctx, data=tally)
    topic.updated_at = utcnow()
    audit.record(
        session,
        ctx,
        "topic.vote",
        "topic",
        topic.id,
        before={"status": before},
        after={"vote": kind, "status": topic.status, **tally},
    )
    return TopicVoteCast(topic, kind, tally, threshold, dependency_id)


async def _link_dependency(
    session: AsyncSession, ctx: Context, topic: Topic, title: str, tier: str, reason: str
) -> str:
    """need_info names a prerequisite: link the existing topic of that title, or create it."""
    if tier not in TIER_BASE:
        raise BadRequest(
            f"dependencyTier must be one of {', '.join(TIER_BASE)}",
            code="invalid_field",
            field="dependencyTier",
        )
    actor = ctx.require_actor()
    key = " ".join(title.casefold().split())
    existing = await session.scalar(select(Topic).where(Topic.title_key == key))
    if existing is not None:
        dep_id = existing.id
        await economy.reward(session, actor.id, economy.NEED_INFO_LINK, "topic.need_info.link", topic.id)
    else:
        content = f'# {title}\n\nOpened as a prerequisite of "{topic.title}": {reason}\n'
        created = await topics.create(session, ctx, topics.NewTopic(title=title, content=content, tier=tier))
        dep_id = created.topic.id
        await economy.reward(session, actor.id, economy.NEED_INFO_NEW_TOPIC, "topic.need_info.new", topic.id)
    if dep_id == topic.id:
        raise BadRequest("a topic cannot depend on itself", code="invalid_field", field="dependencyTitle")
    # An existing edge (of whatever relationship) is kept as it is.
    await dependencies.link(session, ctx, topic.id, dep_id, relationship="assumes", justification=reason)
    return dep_id


async def _ensure_participant(session: AsyncSession, topic_id: str, agent_id: str) -> None:
    if not await session.scalar(
        select(TopicParticipant.id).where(
            TopicParticipant.topic_id == topic_id, TopicParticipant.agent_id == agent_id
        )
    ):
        session.add(
            TopicParticipant(topic_id=topic_id, agent_id=agent_id, role="collaborator", joined_at=utcnow())
        )


async def _tally(session: AsyncSession, topic_id: str) -> dict[str, int]:
    rows = dict(
        (
            await session.execute(
                select(TopicVote.vote, func.count())
                .where(TopicVote.topic_id == topic_id)
                .group_by(TopicVote.vote)
            )
        )
        .tuples()
        .all()
    )
    return {k.value: int(rows.get(k, 0)) for k in TopicVoteKind}


async def topic_votes(session: AsyncSession, topic_id: str) -> TopicVotes:
    topic = await topics.get(session, topic_id)
    rows = (
        await session.execute(
            select(TopicVote, Agent.name)
            .join(Agent, Agent.id == TopicVote.agent_id)
            .where(TopicVote.topic_id == topic.id)
            .order_by(TopicVote.created_at, TopicVote.id)
        )
    ).all()
    tally = await _tally(session, topic.id)
    votes = [(v, name) for v, name in rows]
    return TopicVotes(topic, tally, get_settings().topic_approvals_to_open, votes)


@dataclass(frozen=True)
class TopicDone:
    """A done signal on a topic: the shared completion, the agent's assumptions, the topic's status after."""

    signal: completions.Signal
    assumptions: list[str]
    topic_status: str


async def done(
    session: AsyncSession,
    ctx: Context,
    topic_id: str,
    *,
    status: completions.CompletionStatus,
    summary: str | None,
    assumptions: list[str] | None,
) -> TopicDone:
    actor = ctx.require_actor()
    topic = await lock(session, topic_id)
    row = await session.scalar(
        select(TopicParticipant).where(
            TopicParticipant.topic_id == topic.id,
            TopicParticipant.agent_id == actor.id,
            TopicParticipant.left_at.is_(None),
        )
    )
    if row is None:
        raise Forbidden("join the topic before signalling done", code="not_joined")
    if topic.status in ("proposed", "rejected"):
        # Nothing has been worked on yet (or never will be): a done signal, and its reward, wait until open.
        raise Conflict(
            f"topic is {topic.status}: done signals are taken once it is open",
            code="topic_not_open",
            topicStatus=topic.status,
        )
    signalled = await completions.signal(
        session, ctx, row, resource_type="topic", resource_id=topic.id, status=status, summary=summary
    )
    if assumptions is not None:
        row.done_assumptions = list(assumptions)
    if status is completions.CompletionStatus.ALIGNED and not row.aligned_rewarded:
        row.aligned_rewarded = True  # paid once per agent and topic, however often the status flips
        await economy.reward(session, actor.id, economy.ALIGNED_REWARD, "topic.aligned", topic.id)
    await session.flush()
    await recompute(session, ctx, topic.id)
    signalled = await sessions.with_outcome(session, await fabric_of(session, topic), signalled)
    return TopicDone(signalled, row.done_assumptions or [], topic.status)


async def completions_of(session: AsyncSession, topic_id: str) -> completions.Completions:
    """Every done signal on the topic, oldest first, of agents still joined or gone."""
    topic = await topics.get(session, topic_id)
    rows = (
        await session.execute(
            select(TopicParticipant, Agent.name)
            .join(Agent, Agent.id == TopicParticipant.agent_id)
            .where(TopicParticipant.topic_id == topic.id, TopicParticipant.done_status.is_not(None))
            .order_by(TopicParticipant.done_at, TopicParticipant.id)
        )
    ).all()
    found = [
        completions.completion_of(p, agent_id=p.agent_id, agent_name=name, active=p.left_at is None)
        for p, name in rows
    ]
    return completions.Completions("topic", topic.id, [c for c in found if c is not None])


# Proposals whose authors do not count as the topic's proposers.
_NOT_AUTHORED = ("rejected", "withdrawn")


def _distinct_authors(topic_id: Any) -> Any:
    """How many agents authored a proposal of the topic that was neither rejected nor withdrawn (an author
    who withdrew every proposal it made is no proposer the consensus must win over), by a skip scan: each step
    finds the next author after the last on ix_proposals_resource_author, so the cost follows the number
    of authors, not of proposals. Each step is an ORDER BY ... LIMIT 1 rather than a min(): PostgreSQL
    turns a min() into that only when its statistics say so, and without them (a new table, autovacuum
    off) it read every proposal of the topic."""

    def first_author(p: Any, *after: Any) -> Any:
        return (
            select(p.author_id)
            .where(
                p.resource_type == "topic",
                p.resource_id == topic_id,
                *(p.status != status for status in _NOT_AUTHORED),
                *after,
            )
            .order_by(p.author_id)
            .limit(1)
            .scalar_subquery()
        )

    authors = select(first_author(Proposal).label("author")).cte("authors", recursive=True)
    later = aliased(Proposal)
    following = first_author(later, later.author_id > authors.c.author)
    authors = authors.union_all(select(following).where(authors.c.author.is_not(None)))
    return select(func.count(authors.c.author)).scalar_subquery()


def _standing_statement() -> Any:
    """In one statement: aligned and dissenting done signals of active participants, pending proposals,
    whether one merged, and distinct authors of proposals neither rejected nor withdrawn (of `p_topic`).
    Each part reads an index range of its own (ix_proposals_resource_status, _author), so a topic with
    10,000 proposals costs what one with 10 does."""
    topic_id: Any = bindparam("p_topic")
    active = (TopicParticipant.topic_id == topic_id, TopicParticipant.left_at.is_(None))
    of_topic = (Proposal.resource_type == "topic", Proposal.resource_id == topic_id)

    def signals(status: str) -> Any:
        return select(func.count()).where(*active, TopicParticipant.done_status == status).scalar_subquery()

    pending = select(func.count()).where(*of_topic, Proposal.status == "pending").scalar_subquery()
    merged = exists().where(*of_topic, Proposal.status == "merged")
    return select(signals("aligned"), signals("dissenting"), pending, merged, _distinct_authors(topic_id))


# Built once: every merge and done signal runs it.
_STANDING = DriverStatement.of(_standing_statement())


async def _standing(session: AsyncSession, topic_id: str) -> tuple[int, int, int, bool, int]:
    (row,) = await _STANDING.all(session, {"p_topic": topic_id})
    return (int(row[0]), int(row[1]), int(row[2]), bool(row[3]), int(row[4]))


async def recompute(session: AsyncSession, ctx: Context, topic_id: str) -> str:
    """Move the topic between open, consensus, stable and challenged as its signals now say."""
    topic = await session.get(Topic, topic_id)
    if topic is None or topic.status in ("proposed", "rejected"):
        return topic.status if topic else "missing"
    aligned, dissenting, pending, any_merged, proposers = await _standing(session, topic.id)
    ratio = aligned / (aligned + dissenting) if aligned + dissenting else 0.0
    override = get_settings().consensus_min_aligned
    base = override or TIER_BASE.get(topic.tier, 3)
    needed = base if override else max(base, proposers)
    reached = pending == 0 and any_merged and aligned >= needed and ratio >= CONSENSUS_RATIO
    stream = topics.stream(topic.id)
    before = topic.status
    if topic.status in ("open", "challenged") and reached:
        topic.status = "consensus"
        topic.consensus_ratio = round(ratio, 4)
        topic.consensus_voters = aligned + dissenting
        topic.consensus_since = utcnow()
        events.append(
            session,
            stream,
            "pact.topic.consensus-reached",
            ctx,
            data={"ratio": topic.consensus_ratio, "aligned": aligned, "dissenting": dissenting},
        )
        await bounty.pay_out(session, ctx, topic)
    elif topic.status == "consensus" and not reached:
        topic.status = "open"
        topic.consensus_since = None
        events.append(
            session,
            stream,
            "pact.consensus.broken",
            ctx,
            data={"ratio": round(ratio, 4), "aligned": aligned, "pending": pending},
        )
    elif topic.status == "stable" and (ratio < STABLE_BREAK_RATIO or pending > 0):
        topic.status = "open"
        topic.consensus_since = None
        events.append(session, stream, "pact.stable.broken", ctx, data={"ratio": round(ratio, 4)})
        await _warn_dependants(session, ctx, topic.id)
    if topic.status in ("consensus", "stable"):
        topic.consensus_ratio = round(ratio, 4)
        topic.consensus_voters = aligned + dissenting
    if topic.status != before:
        topic.updated_at = utcnow()
        audit.record(
            session,
            ctx,
            "topic.status",
            "topic",
            topic.id,
            before={"status": before},
            after={"status": topic.status, "ratio": round(ratio, 4)},
        )
    return topic.status


async def challenge(
    session: AsyncSession, ctx: Context, topic: Topic, *, verification: str, notes: str | None
) -> bool:
    """A verification found the topic's source amended or repealed: a settled (or open) topic becomes
    challenged until consensus is reached again. The caller holds the topic's row lock."""
    if topic.status not in ("open", "consensus", "stable"):
        return False
    topic.status = "challenged"
    topic.consensus_since = None
    topic.updated_at = utcnow()
    events.append(
        session,
        topics.stream(topic.id),
        "pact.consensus.challenged",
        ctx,
        data={"verification": verification, "notes": notes},
    )
    return True


async def _warn_dependants(session: AsyncSession, ctx: Context, topic_id: str) -> None:
    for dependant in (
        await session.scalars(
            select(TopicDependency.topic_id).where(TopicDependency.depends_on_id == topic_id)
        )
    ).all():
        events.append(
            session,
            topics.stream(dependant),
            "pact.dependency.unstable",
            ctx,
            data=topic_events.dependency_unstable(topic_id),
        )


async def stabilise(session: AsyncSession) -> int:
    """Consensus held long enough becomes stable."""
    cutoff = utcnow() - timedelta(days=get_settings().stable_after_days)
    # Locked (in id order): a proposal committed meanwhile may have broken consensus; PostgreSQL re-checks
    # the condition on the locked row, so such a topic is skipped instead of being marked stable.
    due = (
        await session.scalars(
            for_update(
                select(Topic)
                .where(Topic.status == "consensus", Topic.consensus_since <= cutoff)
                .order_by(Topic.id)
                .limit(200)
            )
        )
    ).all()
    for topic in due:
        topic.status = "stable"
        topic.updated_at = utcnow()
        events.append(
            session,
            topics.stream(topic.id),
            "pact.topic.stable",
            SYSTEM,
            data=topic_events.stabilised(topic),
        )
        audit.record(
            session,
            SYSTEM,
            "topic.status",
            "topic",
            topic.id,
            before={"status": "consensus"},
            after={"status": "stable"},
        )
    return len(due)
