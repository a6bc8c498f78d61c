"""Topics on the shared consensus engine: the topic adapter, the topic policy and its economy."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import and_, bindparam, exists, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.agents.models import Agent
from domain.axiom import citations as legislation_index
from domain.axiom import section_citations
from domain.consensus import engine as consensus
from domain.consensus import locks, policies, profiles, withdrawal
from domain.consensus.models import Proposal, ProposalVote
from domain.consensus.session_models import SessionPresence
from domain.kernel import audit, events, journal
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.errors import Forbidden, NotFound
from domain.kernel.ids import canonical_id, canonical_ref
from domain.kernel.models import EventStream
from domain.kernel.settings import get_settings
from domain.kernel.sqlutil import DriverStatement, for_update
from domain.topics import economy, topic_events
from domain.topics import lifecycle as topic_lifecycle
from domain.topics import store as topics
from domain.topics.models import Topic, TopicParticipant

_TP = TopicParticipant


class ProposalStatus(StrEnum):
    """Where a topic proposal stands."""

    PENDING = "pending"
    MERGED = "merged"
    REJECTED = "rejected"
    OBJECTED = "objected"
    EXPIRED = "expired"
    SUPERSEDED = "superseded"
    WITHDRAWN = "withdrawn"


def _joined(agent: Any) -> Any:
    """Is the agent a participant of the topic the statement locks (a correlated EXISTS)."""
    return (
        exists()
        .where(_TP.topic_id == Topic.id, _TP.left_at.is_(None), _TP.agent_id == agent)
        .correlate(Topic)
    )


# The topic's event-stream counter as the statement that locks the topic sees it (unlocked, possibly stale:
# the journal writes from it only if it still holds, domain/kernel/journal.py `expect`); NULLs for a stream
# without a counter yet.
_COUNTER = tuple(
    select(column).where(EventStream.stream == bindparam("p_stream")).scalar_subquery()
    for column in (EventStream.last_seq, EventStream.last_hash)
)


def _expect_counter(session: AsyncSession, key: str, last_seq: int | None, last_hash: str | None) -> None:
    if last_seq is not None:
        journal.expect(session, events.stream_of("topic", key or ""), int(last_seq), last_hash)


# A vote reads everything it needs in one statement: the topic and the proposal, each locked (topic first,
# the engine's order; PostgreSQL locks the rows of `OF` in the order given, and a row that waited for its lock
# is read again as committed, which an unlocked row of the same statement would not be), how many
# participants but the author may vote, whether the voter is one of them, and whether the author still is
# (a voter too where the topic's approval policy lets an author approve its own proposal).
_BALLOT = (
    select(
        Topic,
        Proposal,
        select(func.count())
        .where(_TP.topic_id == Topic.id, _TP.left_at.is_(None), _TP.agent_id != Proposal.author_id)
        .correlate(Topic, Proposal)
        .scalar_subquery(),
        _joined(bindparam("p_agent")),
        _joined(Proposal.author_id).correlate(Topic, Proposal),
        *_COUNTER,
    )
    .join(
        Proposal,
        and_(
            Proposal.id == bindparam("p_proposal"),
            Proposal.resource_type == "topic",
            Proposal.resource_id == Topic.id,
        ),
    )
    .where(Topic.id == bindparam("p_topic"))
    .with_for_update(of=[Topic, Proposal], key_share=True)
    .execution_options(populate_existing=True)
)
# A proposal's author must have joined: read in the statement that locks the topic.
_LOCK_FOR_PROPOSAL = (
    select(Topic, _joined(bindparam("p_agent")), *_COUNTER)
    .where(Topic.id == bindparam("p_topic"))
    .with_for_update(of=Topic, key_share=True)
    .execution_options(populate_existing=True)
)
# Section locks on a topic (domain/consensus/locks.py; taken and released in domain/topics/locks.py): PACT
# §4.3 caps a lock's TTL at 60 s; the codes are the hub's.
LOCK_RULES = locks.Rules(
    max_ttl_seconds=60,
    section_not_found="section_not_found",
    section_locked="section_locked",
    not_locked="lock_not_found",
    not_holder="not_lock_holder",
)


# Who may vote on a proposal of the topic (its author aside), each with the principal it joined with: built
# once, run with parameters.
_VOTERS = DriverStatement.of(
    select(_TP.agent_id, SessionPresence.principal_id)
    .outerjoin(SessionPresence, profiles.joins_presence(SessionPresence, "topic", _TP.topic_id, _TP.agent_id))
    .where(_TP.topic_id == bindparam("p_topic"), _TP.left_at.is_(None), _TP.agent_id != bindparam("p_author"))
)


class TopicResource:
    resource_type = "topic"

    def __init__(self, topic: Topic, *, locked: bool = False) -> None:
        self.topic = topic
        self.resource_id = topic.id
        self.locked = locked  # loaded with its row lock (locked_for_proposal, _vote): one lock per request

    async def lock(self, session: AsyncSession) -> None:
        if self.locked:
            return
        locked = await session.scalar(for_update(select(Topic).where(Topic.id == self.topic.id)))
        if locked is not None:
            self.topic = locked
        self.locked = True

    @classmethod
    async def locked_for_proposal(
        cls, session: AsyncSession, topic_id: str, agent_id: str
    ) -> tuple[TopicResource, bool]:
        """The topic, locked, and whether the agent has joined it: one statement."""
        key = canonical_id(topic_id)
        params = {"p_topic": key, "p_agent": agent_id, "p_stream": events.stream_of("topic", key or "")}
        row = (await session.execute(_LOCK_FOR_PROPOSAL, params)).first() if key else None
        if row is None:
            raise NotFound(f"topic {topic_id!r} not found", code="topic_not_found")
        topic, joined, last_seq, last_hash = row
        _expect_counter(session, topic.id, last_seq, last_hash)
        return cls(topic, locked=True), bool(joined)

    @classmethod
    async def locked_for_vote(
        cls, session: AsyncSession, topic_id: str, proposal_id: str, agent_id: str
    ) -> tuple[TopicResource, consensus.Ballot]:
        """The topic, locked, with the vote's ballot: one statement."""
        key = canonical_id(topic_id)
        params = {
            "p_topic": key,
            "p_proposal": canonical_ref(proposal_id),
            "p_agent": agent_id,
            "p_stream": events.stream_of("topic", key or ""),
        }
        row = (await session.execute(_BALLOT, params)).first() if key and params["p_proposal"] else None
        if row is None:  # no such topic (404 topic_not_found) or no such proposal on it
            return cls(await topics.get(session, topic_id)), consensus.Ballot(None, 0, False)
        topic, proposal, voters, may_vote, author_joined, last_seq, last_hash = row
        _expect_counter(session, topic.id, last_seq, last_hash)
        resource = cls(topic, locked=True)
        voters = int(voters or 0) + (1 if author_joined and resource.approval.author_votes else 0)
        return resource, consensus.Ballot(proposal, voters, bool(may_vote))

    async def read(self, session: AsyncSession) -> tuple[str, int]:
        return self.topic.content, self.topic.version

    @property
    def row(self) -> Topic:
        return self.topic

    @property
    def approval(self) -> policies.Approval:
        return policies.of(self.topic)

    async def voters(self, session: AsyncSession, author_id: str) -> dict[str, str | None]:
        rows = await _VOTERS.all(session, {"p_topic": self.topic.id, "p_author": author_id})
        return {row[0]: row[1] for row in rows}


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


async def _on_withdrawn(session: AsyncSession, ctx: Context, proposal: Proposal) -> None:
    """The stake goes back to its author (a withdrawal is not a failed proposal), and a pending proposal no
    longer holds the topic's consensus back."""
    if proposal.stake:
        await economy.reward(
            session, proposal.author_id, proposal.stake, "proposal.withdrawn", proposal.resource_id
        )
    await topic_lifecycle.recompute(session, ctx, proposal.resource_id)


POLICY = consensus.Policy(
    name="multi-approval",
    accepted_status="merged",
    objection_pauses=False,
    on_created=_on_created,
    on_vote=_on_vote,
    on_accepted=_on_accepted,
    on_withdrawn=_on_withdrawn,
)


async def _check_can_propose(session: AsyncSession, topic: Topic, agent_id: str, joined: bool) -> None:
    if topic.status in ("proposed", "rejected"):
        raise Forbidden(
            f"topic is {topic.status}: proposals open once the topic is approved by topic votes",
            code="topic_not_open",
        )
    if not joined:
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


async def propose(
    session: AsyncSession,
    ctx: Context,
    topic_id: str,
    *,
    section_id: str,
    new_content: str,
    summary: str,
    ttl_seconds: int,
    citations: list[str] | None = None,
    proposal_type: str | None = None,
    legislation: legislation_index.IndexHolder | None = None,
) -> Proposal:
    """`legislation` resolves the citations that name imported legislation (domain/axiom/section_citations);
    the web process passes its shared index, others get one read for the call."""
    actor = ctx.require_actor()
    resource, joined = await TopicResource.locked_for_proposal(session, topic_id, actor.id)
    await _check_can_propose(session, resource.topic, actor.id, joined)
    cited = await section_citations.check(session, legislation or legislation_index.IndexHolder(), citations)
    # A statement of its own, after the topic's lock is granted: a lock committed while this request waited
    # for the topic is visible to it (a row read in the statement that waited would be the one of before).
    await locks.assert_unlocked_for(session, resource, LOCK_RULES, section_id, actor.id)
    proposal = await consensus.propose(
        session,
        ctx,
        resource,
        POLICY,
        section_id=section_id,
        new_content=new_content,
        summary=summary,
        ttl_seconds=ttl_seconds,
        citations=cited,
        proposal_type=proposal_type,
    )
    # A pending proposal breaks consensus (the hub's rule: nothing may be pending in consensus); an open or
    # challenged topic cannot reach it with one pending, so only a settled topic needs the recount.
    if resource.topic.status in ("consensus", "stable"):
        await topic_lifecycle.recompute(session, ctx, resource.topic.id)
    return proposal


async def vote(
    session: AsyncSession, ctx: Context, topic_id: str, proposal_id: str, kind: str, reason: str | None
) -> consensus.VoteCast:
    actor_id = ctx.require_actor().id
    resource, ballot = await TopicResource.locked_for_vote(session, topic_id, proposal_id, actor_id)
    await _check_can_vote(session, actor_id)
    return await consensus.vote(session, ctx, resource, POLICY, proposal_id, kind, reason, ballot=ballot)


async def withdraw(session: AsyncSession, ctx: Context, topic_id: str, proposal_id: str) -> Proposal:
    """The author withdraws its pending proposal (joined or not: it stays the proposal's author)."""
    resource = TopicResource(await topics.get(session, topic_id))
    return await withdrawal.withdraw(session, ctx, resource, POLICY, proposal_id)


async def list_for(
    session: AsyncSession, topic_id: str, *, limit: int, offset: int
) -> consensus.ProposalPage:
    resource = TopicResource(await topics.get(session, topic_id))
    return await consensus.list_proposals(session, resource, limit=limit, offset=offset)


async def get_one(session: AsyncSession, topic_id: str, proposal_id: str) -> consensus.ProposalWithVotes:
    resource = TopicResource(await topics.get(session, topic_id))
    proposal = await consensus.get_proposal(session, resource, proposal_id, lock=False)
    return await consensus.with_votes(session, proposal)


async def load(
    session: AsyncSession, resource_type: str, resource_id: str
) -> tuple[consensus.Resource, consensus.Policy] | None:
    if resource_type != "topic":
        return None
    topic = await session.get(Topic, resource_id)
    return (TopicResource(topic), POLICY) if topic is not None else None


# The TTL sweep's batch: topic proposals, but none of a human-only topic (they wait for a person).
_SWEPT = (
    Proposal.resource_type == "topic",
    ~exists().where(
        Topic.id == Proposal.resource_id, Topic.approval_policy == policies.ApprovalPolicy.HUMAN_ONLY.value
    ),
)


async def expire_proposals(session: AsyncSession) -> int:
    return await consensus.expire_due(session, load, where=_SWEPT)


async def set_approval(
    session: AsyncSession,
    ctx: Context,
    topic_id: str,
    *,
    policy: policies.ApprovalPolicy | None,
    allow_self_approval: bool | None,
) -> topics.TopicView:
    """The topic's creator sets its approval policy and self-approval flag (either or both)."""
    actor = ctx.require_actor()
    topic = await topics.get_locked(session, topic_id)
    if topic.creator_id != actor.id:
        raise Forbidden("only the topic's creator may change its approval policy", code="not_owner")
    await change_approval(session, ctx, topic, policy=policy, allow_self_approval=allow_self_approval)
    return await topics.view(session, topic)


async def change_approval(
    session: AsyncSession,
    ctx: Context,
    topic: Topic,
    *,
    policy: policies.ApprovalPolicy | None,
    allow_self_approval: bool | None,
    op: str = "topic.approval_policy",
    note: str | None = None,
) -> policies.Approval:
    """Set a locked topic's approval policy and self-approval flag (either or both), by its creator or by a
    person (PACT §9.2); its pending proposals follow the new policy (consensus.approval_changed), and the
    change is audited as `op` (with the person's note). The approval before the change."""
    resource = TopicResource(topic, locked=True)
    before = resource.approval
    if policy is not None:
        topic.approval_policy = policy.value
    if allow_self_approval is not None:
        topic.allow_self_approval = allow_self_approval
    if resource.approval != before:
        topic.updated_at = utcnow()
        await consensus.approval_changed(session, ctx, resource, before)
        after = topic_events.approval(resource.approval)
        audit.record(
            session,
            ctx,
            op,
            "topic",
            topic.id,
            before=topic_events.approval(before),
            after={**after, "note": note} if note is not None else after,
        )
    return before


LEGISLATION_CITED_MAX = 200


@dataclass(frozen=True)
class CitingProposal:
    """The proposal of a topic that cites a legislation section."""

    proposal_id: str
    status: str
    topic_section_id: str


@dataclass(frozen=True)
class LegislationCited:
    """A legislation section a topic's proposal cites, and what it names."""

    proposal: CitingProposal
    section: section_citations.CitedSection


async def legislation_cited(session: AsyncSession, topic_id: str) -> list[LegislationCited]:
    """The imported legislation sections the topic's proposals cite (oldest proposal first, at most
    LEGISLATION_CITED_MAX), each with the proposal citing it and what it names in the compilation it was
    verified against."""
    rows = await session.execute(
        select(Proposal.id, Proposal.status, Proposal.section_id, Proposal.citations)
        .where(Proposal.resource_type == "topic", Proposal.resource_id == topic_id)
        .order_by(Proposal.created_at, Proposal.id)
    )
    cited = [
        (CitingProposal(pid, status, section), c)
        for pid, status, section, cites in rows
        for c in cites or []
        if section_citations.is_legislation(c)
    ][:LEGISLATION_CITED_MAX]
    return [LegislationCited(p, s) for p, s in await section_citations.describe(session, cited)]
