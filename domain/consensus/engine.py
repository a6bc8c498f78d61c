"""The consensus engine shared by topics and documents.

A resource (topic or document) plugs in through `Resource` (its lock, Markdown, version, row and approval
policy), a `Ballot` it reads for each vote (the proposal and who may vote, in the statement that locks them)
and a `Policy` (the resource type's rules: its accepted status, what an objection does under the default
approval policy, its hooks). The resource's approval policy (domain/consensus/policies.py) decides how votes
and the TTL become an outcome. The engine owns the proposal lifecycle:
create → votes → accepted (merged/approved) | rejected | objected | expired | superseded, or withdrawn by
its author while pending (domain/consensus/withdrawal.py).

Concurrency: every write first locks the resource row, then the proposal row, so all proposal
transitions of one resource are serialised (on SQLite the writer's BEGIN IMMEDIATE does the same); a
merge and an edit of the same section can never interleave, and the (proposal, agent) unique key makes a
second vote impossible even if two requests race.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import ColumnElement, bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.orm.util import identity_key

from domain.consensus import escalations, obligations, proposal_events, queries, record_events, sections
from domain.consensus import policies as approval_policies
from domain.consensus.models import Proposal, ProposalVote, SectionSalience
from domain.consensus.policies import Approval, ApprovalPolicy, Outcome, Tally
from domain.kernel import audit, events
from domain.kernel.clock import utcnow
from domain.kernel.context import SYSTEM, Context
from domain.kernel.errors import Conflict, Forbidden, NotFound
from domain.kernel.ids import canonical_ref, new_id
from domain.kernel.sqlutil import for_update


class Resource(Protocol):
    """What the engine needs from a topic or a document."""

    resource_type: str
    resource_id: str

    async def lock(self, session: AsyncSession) -> None: ...

    async def read(self, session: AsyncSession) -> tuple[str, int]:
        """The current Markdown and version."""
        ...

    @property
    def row(self) -> Any:
        """The resource's ORM row (a Topic, a Document: id, content, version, updated_at), which a merge
        writes. Typed Any: the two models share those columns but no base class declares them."""
        ...

    @property
    def approval(self) -> Approval:
        """The resource's approval policy, as its row (locked by the caller) holds it."""
        ...

    async def voters(self, session: AsyncSession, author_id: str) -> Mapping[str, str | None]:
        """The agents who may vote on a proposal of `author_id`'s, the author aside: each id with the
        principal recorded when it joined (None: the agent is its own), read in the same statement."""
        ...


Hook = Callable[[AsyncSession, Context, Proposal], Awaitable[None]]


async def _noop(session: AsyncSession, ctx: Context, proposal: Proposal) -> None:
    return None


@dataclass(frozen=True)
class Policy:
    """A resource type's rules. `objection_pauses`: documents pause a proposal on an objection under the
    default approval policy too, and reviewers find paused ones on their proposal desk; topics have no desk,
    so under a PACT policy an objection there also raises an escalation naming the proposal."""

    name: str
    accepted_status: str  # "merged" on topics, "approved" on documents
    objection_pauses: bool  # documents: an objection pauses the proposal for a human
    on_created: Hook = _noop
    on_vote: Callable[[AsyncSession, Context, Proposal, str], Awaitable[None]] = field(
        default=lambda s, c, p, k: _noop(s, c, p)
    )
    on_accepted: Hook = _noop
    on_withdrawn: Hook = _noop  # after its author withdrew it (domain/consensus/withdrawal.py)

    def outcome(self, p: Proposal, needed: int) -> str | None:
        """The status a proposal moves to after a vote, or None while it stays open."""
        if p.reject_count >= needed:
            return "rejected"
        if self.objection_pauses:
            if p.object_count > 0:
                return "objected"
            return self.accepted_status if p.approve_count >= needed else None
        # Topics: each objection has to be outweighed by one more approval.
        return self.accepted_status if p.approve_count - p.object_count >= needed else None


_PROPOSAL = select(Proposal).where(
    Proposal.id == bindparam("p_id"),
    Proposal.resource_type == bindparam("p_type"),
    Proposal.resource_id == bindparam("p_resource"),
)
_LOCK_PROPOSAL = _PROPOSAL.with_for_update().execution_options(populate_existing=True)


def stream_of(resource: Resource) -> str:
    return events.stream_of(resource.resource_type, resource.resource_id)


async def propose(
    session: AsyncSession,
    ctx: Context,
    resource: Resource,
    policy: Policy,
    *,
    section_id: str,
    new_content: str,
    summary: str,
    ttl_seconds: int,
    citations: list[str] | None = None,
    proposal_type: str | None = None,
    proposal_id: str | None = None,
) -> Proposal:
    """`proposal_id` is for fixtures that name their proposals (the PACT conformance lab's `prop_xyz`);
    otherwise a new id is drawn."""
    actor = ctx.require_actor()
    await resource.lock(session)
    markdown, version = await resource.read(session)
    if sections.find(markdown, section_id) is None:
        raise NotFound(
            f"section {section_id} does not exist; read the sections tree for current ids",
            code="section_not_found",
            field="sectionId",
        )
    now = utcnow()
    proposal = Proposal(
        id=proposal_id or new_id(),
        resource_type=resource.resource_type,
        resource_id=resource.resource_id,
        section_id=section_id,
        author_id=actor.id,
        author_name=actor.name,
        new_content=new_content,
        summary=summary,
        citations=list(citations or []),
        proposal_type=proposal_type,
        base_version=version,
        ttl_seconds=ttl_seconds,
        status="pending",
        approve_count=0,
        reject_count=0,
        object_count=0,
        stake=0,
        created_at=now,
        expires_at=now + timedelta(seconds=ttl_seconds),
    )
    await policy.on_created(session, ctx, proposal)  # the stake, before the row is written
    await queries.insert_proposal(session, proposal)
    events.append(
        session,
        stream_of(resource),
        "pact.proposal.created",
        ctx,
        section_id=section_id,
        correlation_id=proposal.id,
        data=proposal_events.created(proposal),
    )
    audit.record(session, ctx, "proposal.create", "proposal", proposal.id, after=snapshot(proposal))
    approval = resource.approval
    if approval.policy is ApprovalPolicy.HUMAN_ONLY:
        await _ask_a_person(session, ctx, resource, proposal)
    elif approval.policy in approval_policies.SILENT and await _merges_at_once(session, resource, proposal):
        await session.flush()  # the merge settles the proposal's row with one UPDATE
        await accept(session, SYSTEM, resource, policy, proposal, auto=True)
        audit.record(
            session,
            SYSTEM,
            "proposal.auto-merge",
            "proposal",
            proposal.id,
            before={"status": "pending"},
            after=snapshot(proposal),
        )
    else:
        # Each agent whose vote counts now owes one (PACT §6.5); under human-only a person decides.
        await obligations.open_votes(
            session,
            resource.resource_type,
            resource.resource_id,
            proposal_id=proposal.id,
            members=await resource.voters(session, proposal.author_id),
            due_by=proposal.expires_at,
        )
    return proposal


async def _ask_a_person(session: AsyncSession, ctx: Context, resource: Resource, proposal: Proposal) -> None:
    """Under human-only: an escalation naming the proposal puts it before the reviewers, who approve or
    reject it with their answer (domain/review/escalations.py)."""
    await escalations.create(
        session,
        ctx,
        resource_type=resource.resource_type,
        resource_id=resource.resource_id,
        message=(
            f"Approve or reject proposal {proposal.id} on {proposal.section_id} ({proposal.summary}): this "
            f"{resource.resource_type} takes proposals only on a person's decision (approval policy "
            "human-only). Answer with the decision approve or reject."
        ),
        section_id=proposal.section_id,
        proposal_id=proposal.id,
        origin=escalations.EscalationOrigin.POLICY,
    )


async def _scores(session: AsyncSession, resource: Resource, section_id: str) -> list[tuple[str, str, int]]:
    """(agent id, agent name, score) of every salience score of the section."""
    rows = await session.execute(
        select(SectionSalience.agent_id, SectionSalience.agent_name, SectionSalience.score).where(
            SectionSalience.resource_type == resource.resource_type,
            SectionSalience.resource_id == resource.resource_id,
            SectionSalience.section_id == section_id,
        )
    )
    return [(agent_id, name, score) for agent_id, name, score in rows.all()]


async def _merges_at_once(session: AsyncSession, resource: Resource, proposal: Proposal) -> bool:
    """Under a silent policy, at creation: `auto` merges unless a critical agent must approve first;
    `objection-based` merges when its window is empty: every agent who may vote scored the section 0
    (or there is none), so nobody's silence is waited for (PACT §10.5)."""
    voters = await resource.voters(session, proposal.author_id)
    scores = await _scores(session, resource, proposal.section_id)
    if resource.approval.policy is ApprovalPolicy.AUTO:
        return not any(a in voters and s >= approval_policies.CRITICAL_SALIENCE for a, _n, s in scores)
    return voters.keys() <= {a for a, _n, s in scores if s == 0}


async def _critical(session: AsyncSession, resource: Resource, proposal: Proposal) -> list[tuple[str, str]]:
    """The agents who scored the proposal's section 10 and may vote on it but have not approved it: a
    silent policy does not merge while there is one (PACT §10.4)."""
    voters = await resource.voters(session, proposal.author_id)
    approved = set(
        (
            await session.scalars(
                select(ProposalVote.agent_id).where(
                    ProposalVote.proposal_id == proposal.id, ProposalVote.kind == "approve"
                )
            )
        ).all()
    )
    return [
        (agent_id, name)
        for agent_id, name, score in await _scores(session, resource, proposal.section_id)
        if score >= approval_policies.CRITICAL_SALIENCE and agent_id in voters and agent_id not in approved
    ]


async def get_proposal(
    session: AsyncSession, resource: Resource, proposal_id: str, *, lock: bool
) -> Proposal:
    pid = canonical_ref(proposal_id)
    params = {"p_id": pid, "p_type": resource.resource_type, "p_resource": resource.resource_id}
    proposal = await session.scalar(_LOCK_PROPOSAL if lock else _PROPOSAL, params) if pid else None
    if proposal is None:
        raise NotFound(f"proposal {proposal_id} not found", code="proposal_not_found")
    return proposal


@dataclass(frozen=True)
class Ballot:
    """What a vote needs, read by the resource under its lock with the proposal locked too (each resource
    in one statement): the proposal (None if the resource has no such proposal: the vote answers 404), how
    many may vote on it (agents joined with a voting role, its author aside) and whether the voter is one."""

    proposal: Proposal | None
    voters: int
    may_vote: bool


async def _add_vote(
    session: AsyncSession, proposal: Proposal, agent_id: str, agent_name: str, kind: str, reason: str | None
) -> queries.Added:
    added = await queries.add_vote(
        session, proposal, agent_id=agent_id, agent_name=agent_name, kind=kind, reason=reason, at=utcnow()
    )
    if added is not None:
        return added
    existing = await session.scalar(
        select(ProposalVote.kind).where(
            ProposalVote.proposal_id == proposal.id, ProposalVote.agent_id == agent_id
        )
    )
    raise Conflict(f"already voted ({existing}) on this proposal", code="already_voted")


@dataclass(frozen=True)
class VoteCast:
    """A vote recorded, and where it left its proposal: the approvals its policy requires, those still
    missing (net of the objections that outweigh approvals under concord-default) and the policy's name."""

    proposal: Proposal
    vote: str
    required_approvals: int
    remaining_approvals: int
    policy: str
    voted_at: datetime


async def vote(
    session: AsyncSession,
    ctx: Context,
    resource: Resource,
    policy: Policy,
    proposal_id: str,
    kind: str,
    reason: str | None = None,
    *,
    ballot: Ballot,
) -> VoteCast:
    """One agent's vote, on the `ballot` its resource read under its lock."""
    actor = ctx.require_actor()
    proposal = ballot.proposal
    if proposal is None:
        raise NotFound(f"proposal {proposal_id} not found", code="proposal_not_found")
    approval = resource.approval
    if proposal.author_id == actor.id and not approval.author_votes:
        raise Forbidden("an author cannot vote on their own proposal", code="self_vote")
    if proposal.status != "pending":
        raise Conflict(
            f"proposal is {proposal.status}; only pending proposals take votes",
            code="proposal_not_pending",
            status=proposal.status,
        )
    if not ballot.may_vote:
        raise Forbidden(
            f"only agents joined to this {resource.resource_type} with a voting role may vote",
            code="not_eligible",
        )
    if approval.policy is ApprovalPolicy.HUMAN_ONLY:
        raise Forbidden(
            f"this {resource.resource_type} takes proposals only on a person's decision (approval policy "
            "human-only): agents propose, comment and escalate, reviewers approve or reject",
            code="human_only",
        )
    before = snapshot(proposal)
    added = await _add_vote(session, proposal, actor.id, actor.name, kind, reason)
    await policy.on_vote(session, ctx, proposal, kind)
    needed = approval_policies.required(approval, ballot.voters)
    # A vote is its own event (as a topic vote is pact.topic.vote.<kind>); the proposal's outcome, if this
    # vote decided one, follows as pact.proposal.merged, .rejected or .objected, so a reader never takes
    # one reject vote for the rejection.
    events.append(
        session,
        stream_of(resource),
        f"pact.proposal.vote.{kind}",
        ctx,
        section_id=proposal.section_id,
        correlation_id=proposal.id,
        data=proposal_events.voted(proposal, kind, reason, needed),
    )
    if added.discharged is None:
        await obligations.discharge_vote(session, proposal.id, actor.id)
    else:  # the vote's statement discharged it: its event follows the vote's, as above
        await obligations.record_discharged(
            session, added.discharged, obligations.DischargeKind.FULFILLED, added.at
        )
    outcome = await _outcome(session, resource, policy, proposal, ballot.voters, needed)
    if outcome == policy.accepted_status:
        await accept(session, ctx, resource, policy, proposal, auto=False)
    elif outcome in ("rejected", "objected"):
        proposal.status = outcome
        if outcome == "rejected":
            proposal.resolved_at = utcnow()
        events.append(
            session,
            stream_of(resource),
            f"pact.proposal.{outcome}",
            ctx,
            section_id=proposal.section_id,
            correlation_id=proposal.id,
            data=proposal_events.decided_by_votes(proposal, needed),
        )
        await obligations.discharge_for_proposal(session, proposal.id, outcome)
        if outcome == "objected" and not policy.objection_pauses:
            await _escalate_objection(session, ctx, resource, proposal, reason)
    audit.record(
        session, ctx, f"proposal.{kind}", "proposal", proposal.id, before=before, after=snapshot(proposal)
    )
    default = approval.policy is ApprovalPolicy.CONCORD_DEFAULT
    outweighed = 0 if policy.objection_pauses or not default else proposal.object_count
    remaining = max(0, needed - (proposal.approve_count - outweighed))
    name = policy.name if default else approval.policy.value
    return VoteCast(proposal, kind, needed, remaining, name, utcnow())


def tally(p: Proposal) -> Tally:
    return Tally(approve=p.approve_count, reject=p.reject_count, object=p.object_count)


async def _outcome(
    session: AsyncSession, resource: Resource, policy: Policy, proposal: Proposal, voters: int, needed: int
) -> str | None:
    """The status the proposal moves to after a vote, or None while it stays pending."""
    approval = resource.approval
    if approval.policy is ApprovalPolicy.CONCORD_DEFAULT:
        return policy.outcome(proposal, needed)
    window_over = utcnow() >= proposal.created_at + timedelta(seconds=proposal.ttl_seconds)
    match approval_policies.after_vote(approval, tally(proposal), voters, window_over=window_over):
        case Outcome.ACCEPTED:
            return policy.accepted_status
        case Outcome.UNLESS_CRITICAL:
            return None if await _critical(session, resource, proposal) else policy.accepted_status
        case Outcome.REJECTED:
            return "rejected"
        case Outcome.OBJECTED:
            return "objected"
        case _:
            return None


async def _escalate_objection(
    session: AsyncSession, ctx: Context, resource: Resource, proposal: Proposal, reason: str | None
) -> None:
    """A proposal paused by an objection on a resource without a reviewers' desk (a topic) is put before
    the reviewers by an escalation naming it, raised in the objector's name."""
    await escalations.create(
        session,
        ctx,
        resource_type=resource.resource_type,
        resource_id=resource.resource_id,
        message=(
            f"Proposal {proposal.id} on {proposal.section_id} ({proposal.summary}) was objected to"
            f"{': ' + reason if reason else ''}. Approve or reject it (approval policy "
            f"{resource.approval.policy}), or answer without a decision and let its author propose again."
        ),
        section_id=proposal.section_id,
        proposal_id=proposal.id,
        origin=escalations.EscalationOrigin.POLICY,
    )


async def accept(
    session: AsyncSession, ctx: Context, resource: Resource, policy: Policy, proposal: Proposal, *, auto: bool
) -> None:
    """Apply the proposal to its section, bump the version and supersede rival pending proposals."""
    markdown, version = await resource.read(session)
    now = utcnow()
    if sections.find(markdown, proposal.section_id) is None:
        # The section vanished in an earlier merge: nothing to apply to.
        proposal.status = "superseded"
        proposal.resolved_at = now
        events.append(
            session,
            stream_of(resource),
            "pact.proposal.superseded",
            ctx,
            section_id=proposal.section_id,
            correlation_id=proposal.id,
            data=proposal_events.section_gone(proposal),
        )
        await obligations.discharge_for_proposal(session, proposal.id, "superseded")
        return
    new_markdown = sections.replace_body(markdown, proposal.section_id, proposal.new_content)
    settled = await queries.settle_section(
        session,
        proposal,
        policy.accepted_status,
        resource.row,
        content=new_markdown,
        version=version + 1,
        at=now,
    )
    # The rows have them already: nothing left for the flush to write.
    set_committed_value(proposal, "status", policy.accepted_status)
    set_committed_value(proposal, "resolved_at", now)
    events.append(
        session,
        stream_of(resource),
        "pact.proposal.auto-merged" if auto else "pact.proposal.merged",
        ctx,
        section_id=proposal.section_id,
        correlation_id=proposal.id,
        data=proposal_events.merged(proposal, version + 1),
    )
    # What was owed on the merged proposal and on the rivals it superseded: moot now.
    rivals = [rival_id for rival_id in settled.ids if rival_id != proposal.id]
    if settled.discharged is None:
        await obligations.discharge_for_proposals(session, [proposal.id, *rivals], "superseded")
    else:  # the settle discharged them: their events follow the merge's, as above
        await obligations.record_discharged(
            session, settled.discharged, obligations.DischargeKind.SUPERSEDED, now
        )
    for rival_id in rivals:
        loaded = session.identity_map.get(identity_key(Proposal, rival_id))
        if isinstance(loaded, Proposal):  # keep an already loaded copy true to the row
            set_committed_value(loaded, "status", "superseded")
            set_committed_value(loaded, "resolved_at", now)
        events.append(
            session,
            stream_of(resource),
            "pact.proposal.superseded",
            ctx,
            section_id=proposal.section_id,
            correlation_id=rival_id,
            data=proposal_events.superseded(rival_id, proposal),
        )

        audit.record(
            session,
            ctx,
            "proposal.supersede",
            "proposal",
            rival_id,
            after=proposal_events.superseded_audit(proposal),
        )
    if rivals:  # what a policy put before a person for them: nothing is left to decide
        await escalations.close_raised_for(
            session,
            ctx,
            resource_type=resource.resource_type,
            resource_id=resource.resource_id,
            proposal_ids=rivals,
            reason=f"superseded by proposal {proposal.id}, merged on the same section: nothing is left to "
            "decide",
        )
    await policy.on_accepted(session, ctx, proposal)


async def expire_due(
    session: AsyncSession,
    load: Callable[[AsyncSession, str, str], Awaitable[tuple[Resource, Policy] | None]],
    *,
    where: Sequence[ColumnElement[bool]] = (),
    limit: int = 200,
) -> int:
    """TTL sweep, by each resource's approval policy (policies.at_ttl): under the default, silence is
    consent after at least one approval with no rejection or objection; under `objection-based` (and
    `auto`) silence is consent, unless an agent that scored the section 10 has yet to approve: then the
    proposal waits for it until the abstention deadline, where that agent no longer holds it back;
    `single`, `majority` and `unanimous` expire; `human-only` proposals wait for a person (the area's
    `where` leaves them out, so they never fill the batch)."""
    now = utcnow()
    due = (
        await session.execute(
            select(Proposal.resource_type, Proposal.resource_id, Proposal.id)
            .where(Proposal.status == "pending", Proposal.expires_at <= now, *where)
            .order_by(Proposal.expires_at)
            .limit(limit)
        )
    ).all()
    # Lock every resource concerned, in one global order, before the first change: this unit of work
    # spans resources, and taking a resource lock after a wallet lock could deadlock with a vote.
    loaded_by_key: dict[tuple[str, str], tuple[Resource, Policy]] = {}
    for key in sorted({(rt, rid) for rt, rid, _pid in due}):
        loaded = await load(session, *key)
        if loaded is not None:
            await loaded[0].lock(session)
            loaded_by_key[key] = loaded
    changed = 0
    for resource_type, resource_id, proposal_id in due:
        if (resource_type, resource_id) not in loaded_by_key:
            continue
        resource, policy = loaded_by_key[(resource_type, resource_id)]
        proposal = await session.scalar(for_update(select(Proposal).where(Proposal.id == proposal_id)))
        if proposal is None or proposal.status != "pending":
            continue
        outcome = approval_policies.at_ttl(resource.approval, tally(proposal))
        if outcome is Outcome.WAITS:
            continue
        before = snapshot(proposal)
        if outcome is Outcome.UNLESS_CRITICAL:
            critical = await _critical(session, resource, proposal)
            deadline = approval_policies.abstention_deadline(proposal.created_at, proposal.ttl_seconds)
            if critical and now < deadline:
                was = proposal.expires_at
                proposal.expires_at = deadline  # due again when the critical agents' time is up
                audit.record(
                    session,
                    SYSTEM,
                    "proposal.hold",
                    "proposal",
                    proposal.id,
                    before=proposal_events.held_audit(before, was),
                    after=proposal_events.held_audit(before, deadline, [a for a, _n in critical]),
                )
                changed += 1
                continue
            for agent_id, agent_name in critical:
                events.append(
                    session,
                    stream_of(resource),
                    "pact.salience.auto-demoted",
                    SYSTEM,
                    section_id=proposal.section_id,
                    data=record_events.salience_auto_demoted(
                        proposal.id,
                        agent_id,
                        agent_name,
                        approval_policies.CRITICAL_SALIENCE,
                        approval_policies.DEMOTED_SALIENCE,
                    ),
                )
            outcome = Outcome.ACCEPTED
        if outcome is Outcome.ACCEPTED:
            await accept(session, SYSTEM, resource, policy, proposal, auto=True)
        else:
            proposal.status = "expired"
            proposal.resolved_at = now
            events.append(
                session,
                stream_of(resource),
                "pact.proposal.expired",
                SYSTEM,
                section_id=proposal.section_id,
                correlation_id=proposal.id,
                data=proposal_events.closed(proposal),
            )
            await obligations.discharge_for_proposal(session, proposal.id, "expired")
        audit.record(
            session,
            SYSTEM,
            "proposal.expire",
            "proposal",
            proposal.id,
            before=before,
            after=snapshot(proposal),
        )
        changed += 1
    return changed


@dataclass(frozen=True)
class ProposalPage:
    """One page of a resource's proposals, newest first, and how many it has in all."""

    proposals: Sequence[Proposal]
    total: int
    limit: int
    offset: int


@dataclass(frozen=True)
class ProposalWithVotes:
    """A proposal and its votes, in the order they were cast."""

    proposal: Proposal
    votes: Sequence[ProposalVote]


async def list_proposals(
    session: AsyncSession,
    resource: Resource,
    *,
    limit: int,
    offset: int,
    section_id: str | None = None,
    status: str | None = None,
) -> ProposalPage:
    conds = [Proposal.resource_type == resource.resource_type, Proposal.resource_id == resource.resource_id]
    if section_id:
        conds.append(Proposal.section_id == section_id)
    if status:
        conds.append(Proposal.status == status)
    total = int(await session.scalar(select(func.count(Proposal.id)).where(*conds)) or 0)
    rows = (
        await session.scalars(
            select(Proposal)
            .where(*conds)
            .order_by(Proposal.created_at.desc(), Proposal.id.desc())
            .limit(limit)
            .offset(offset)
        )
    ).all()
    return ProposalPage(rows, total, limit, offset)


async def with_votes(session: AsyncSession, proposal: Proposal) -> ProposalWithVotes:
    rows = (
        await session.scalars(
            select(ProposalVote).where(ProposalVote.proposal_id == proposal.id).order_by(ProposalVote.id)
        )
    ).all()
    return ProposalWithVotes(proposal, rows)


def snapshot(p: Proposal) -> dict[str, Any]:
    """The audit trail's record of a proposal's state (stored as it is: its keys never change)."""
    return {"id": p.id, "sectionId": p.section_id, "status": p.status, **proposal_events.counts(p)}


async def decide_paused(
    session: AsyncSession,
    ctx: Context,
    resource: Resource,
    policy: Policy,
    proposal_id: str,
    *,
    approve: bool,
) -> Proposal:
    """A human reviewer's decision on an open proposal: objected (paused) or still pending (PACT §9.2: a
    person may approve or reject any proposal, overriding the agents' votes)."""
    await resource.lock(session)
    proposal = await get_proposal(session, resource, proposal_id, lock=True)
    if proposal.status not in ("objected", "pending"):
        raise Conflict(f"proposal is {proposal.status}; nothing to decide", code="proposal_not_pending")
    before = snapshot(proposal)
    if approve:
        await accept(session, ctx, resource, policy, proposal, auto=False)
    else:
        proposal.status = "rejected"
        proposal.resolved_at = utcnow()
        events.append(
            session,
            stream_of(resource),
            "pact.proposal.rejected",
            ctx,
            section_id=proposal.section_id,
            correlation_id=proposal.id,
            data=proposal_events.rejected_by_a_person(proposal),
        )
        await obligations.discharge_for_proposal(session, proposal.id, "rejected")
    audit.record(
        session, ctx, "proposal.decide", "proposal", proposal.id, before=before, after=snapshot(proposal)
    )
    return proposal


async def approval_changed(session: AsyncSession, ctx: Context, resource: Resource, before: Approval) -> None:
    """After the owner set the resource's approval policy (its row locked and already written): the
    resource's pending proposals are decided by the new policy from their next vote or their TTL on.
    Entering `human-only`, each is put before the reviewers as a new proposal would be; leaving it, each
    gets a fresh TTL from now (it may have waited for a person far beyond its first one)."""
    after = resource.approval
    if after == before:
        return
    human = ApprovalPolicy.HUMAN_ONLY
    if (after.policy is human) != (before.policy is human):
        pending = (
            await session.scalars(
                for_update(
                    select(Proposal)
                    .where(
                        Proposal.resource_type == resource.resource_type,
                        Proposal.resource_id == resource.resource_id,
                        Proposal.status == "pending",
                    )
                    .order_by(Proposal.created_at, Proposal.id)
                )
            )
        ).all()
        now = utcnow()
        for proposal in pending:
            if after.policy is human:
                await _ask_a_person(session, ctx, resource, proposal)
                await obligations.discharge_for_proposal(session, proposal.id, "escalated")
            else:
                proposal.expires_at = now + timedelta(seconds=proposal.ttl_seconds)
    events.append(
        session,
        stream_of(resource),
        "pact.policy.changed",
        ctx,
        data=record_events.policy_changed(after, before),
    )
