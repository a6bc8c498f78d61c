"""Session awareness (PACT v2.0.3 §4.4, §15.6, §17.13 "Manifest visibility"): what an agent needs to know
that it is in a topic or a document with others: the whole-resource snapshot (`_status`), the caller-scoped
manifest, heartbeats with liveness, the mark-read cursor, and the pieces of atomic onboarding (`_onboard`).

One implementation serves topics and documents, as the consensus engine does. An area describes its resource
as a `Fabric` (its members, whether it is closed or settled) and names the calling member; this module reads
and writes the shared tables (domain/consensus/session_models.py) and the resource's event stream.

Disclosure (§17.13): each member has an organisation (`Member.org`: a document member's is the document's
organisation, a hub agent is its own). A member of another organisation than the caller's is a cross-org
counterparty: the caller sees its id, principal, display name, role and liveness, and only counts of its
constraints and obligations; its `agent_name` and enumerations are elided (keys omitted, not nulled).

Liveness: a member is `live` while its last heartbeat (or its joining, before any heartbeat) is within the
configured timeout, `stale` after; staleness is a flag, never an eviction.

Writes: a heartbeat and a mark-read take the member's presence row (created by an INSERT … ON CONFLICT DO
NOTHING, then locked), so two at once for one member are serialised; a heartbeat's receipt is keyed by
(resource, member, client_heartbeat_id), so a repeat, even a racing one, records nothing more."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Generic, TypeVar

from sqlalchemy import delete, exists, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import obligations, profiles, records, sections
from domain.consensus.completions import Signal
from domain.consensus.models import Escalation, Proposal, SectionConstraint, SectionIntent
from domain.consensus.obligations import Obligation
from domain.consensus.phases import Phase
from domain.consensus.session_models import HeartbeatReceipt, SessionPresence
from domain.kernel import events, principals, sqlutil
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest, Conflict, Forbidden, Unprocessable
from domain.kernel.event_record import cursor_of
from domain.kernel.sqlutil import execute_counted, for_update

SPEC_VERSION = "2.0.3"
# A heartbeat's answer is replayed for a repeat of its client_heartbeat_id within this window (§4.4.3: at
# least 60 s); a repeat after it is a new heartbeat.
IDEMPOTENCY_WINDOW = timedelta(seconds=300)
OPEN_STATUSES = ("pending",)
SETTLED_STATUSES = ("merged", "approved")


class Liveness(StrEnum):
    LIVE = "live"
    STALE = "stale"


class TrustLevel(StrEnum):
    """PACT's trust levels (§4.4.1 members[].trust_level)."""

    OBSERVER = "Observer"
    SUGGESTER = "Suggester"
    COLLABORATOR = "Collaborator"
    AUTONOMOUS = "Autonomous"


class DisclosureLevel(StrEnum):
    """How much of a counterparty a caller sees (§10.3 levels, as §4.4.2 names them)."""

    CONSTRAINT = "constraint"
    CATEGORY = "category"  # a cross-org counterparty: reduced, PII elided
    REASONING = "reasoning"  # a member of the caller's own organisation: everything the manifest holds
    HUMAN = "human"


class StatusPart(StrEnum):
    """What `_status?include=` may ask for (§4.4.1)."""

    MEMBERS = "members"
    PHASE = "phase"
    LATEST_EVENT = "latest_event"
    OBLIGATIONS = "obligations"
    ACTIVITY = "activity"


ALL_PARTS = frozenset(StatusPart)


class PactRole(StrEnum):
    """PACT's role descriptors (§4.4.5 `role`; the conformance vectors' observer | contributor | proposer):
    what a member declares it is there to do. Each area maps them onto its own roles; a member that declared
    none is shown with the one its area's role implies (`Member.pact_role`)."""

    OBSERVER = "observer"
    CONTRIBUTOR = "contributor"
    PROPOSER = "proposer"


class OnboardRefusal(StrEnum):
    """Onboarding refusals (§4.4.5 error codes)."""

    INVALID = "constraint.invalid"
    INCOMPATIBLE = "constraint.incompatible"


# ---- what an area gives ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Member:
    """A joined member of the resource, as its area knows it."""

    id: str
    name: str
    role: str
    trust_level: TrustLevel
    org: str
    joined_at: datetime
    pact_role: PactRole = PactRole.CONTRIBUTOR  # what the area's role implies, unless it declared one


@dataclass(frozen=True)
class Fabric:
    """A topic or a document seen as a PACT fabric: its active members and the area's own state facts."""

    resource_type: str
    resource_id: str
    members: tuple[Member, ...]
    closed: bool = False  # the resource takes no more proposals
    settled: bool = False  # the area's own "converged" (a topic in consensus or stable)

    @property
    def stream(self) -> str:
        return events.stream_of(self.resource_type, self.resource_id)

    def member(self, member_id: str) -> Member:
        for m in self.members:
            if m.id == member_id:
                return m
        raise Forbidden(f"join this {self.resource_type} first", code="agent.not_joined")


# ---- results -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Presence:
    last_seen: datetime
    last_heartbeat_seq: int | None
    attention_required: bool
    liveness: Liveness
    read_to_seq: int


@dataclass(frozen=True)
class MemberView:
    """A member as the caller may see it: `cross_org` members come reduced (§17.13)."""

    member: Member
    principal_id: str
    pact_role: PactRole
    contact: Mapping[str, str] | None  # what it gave when joining, if anything
    presence: Presence
    cross_org: bool
    pending_obligations: int
    constraints: int

    @property
    def disclosure(self) -> DisclosureLevel:
        return DisclosureLevel.CATEGORY if self.cross_org else DisclosureLevel.REASONING


@dataclass(frozen=True)
class Status:
    fabric_id: str
    parts: frozenset[StatusPart]
    phase: Phase
    latest_seq: int
    members: list[MemberView]
    obligations: list[Obligation]
    open_proposals: int
    open_intents: int
    heartbeat_timeout_seconds: int
    snapshot_at: datetime


@dataclass(frozen=True)
class ConstraintView:
    id: str
    section_id: str
    boundary: str
    category: str
    published_by_self: bool


@dataclass(frozen=True)
class Manifest:
    fabric_id: str
    caller: MemberView
    phase: Phase
    constraints_on_caller: list[ConstraintView]
    obligations: list[Obligation]
    counterparties: list[MemberView]
    latest_seq: int
    unread_from: int | None
    unread_to: int | None
    heartbeat_timeout_seconds: int
    snapshot_at: datetime


@dataclass(frozen=True)
class Liveliness:
    member_id: str
    last_seen: datetime
    attention_required: bool
    liveness: Liveness


@dataclass(frozen=True)
class Heartbeat:
    fabric_id: str
    client_heartbeat_id: str
    received_at: datetime
    latest_seq: int
    caller_last_seen: datetime
    members: list[Liveliness]
    pending_obligations: int
    drift: int | None  # events the caller has not observed yet, when it said what it observed
    replayed: bool = False

    def stored(self) -> dict[str, Any]:
        return {
            "fabric_id": self.fabric_id,
            "client_heartbeat_id": self.client_heartbeat_id,
            "received_at": iso(self.received_at),
            "latest_seq": self.latest_seq,
            "caller_last_seen": iso(self.caller_last_seen),
            "members": [
                [m.member_id, iso(m.last_seen), m.attention_required, str(m.liveness)] for m in self.members
            ],
            "pending_obligations": self.pending_obligations,
            "drift": self.drift,
        }

    @classmethod
    def replay(cls, stored: dict[str, Any]) -> Heartbeat:
        return cls(
            fabric_id=stored["fabric_id"],
            client_heartbeat_id=stored["client_heartbeat_id"],
            received_at=datetime.fromisoformat(stored["received_at"]),
            latest_seq=int(stored["latest_seq"]),
            caller_last_seen=datetime.fromisoformat(stored["caller_last_seen"]),
            members=[
                Liveliness(m[0], datetime.fromisoformat(m[1]), bool(m[2]), Liveness(m[3]))
                for m in stored["members"]
            ],
            pending_obligations=int(stored["pending_obligations"]),
            drift=stored["drift"],
            replayed=True,
        )


@dataclass(frozen=True)
class MarkRead:
    fabric_id: str
    member_id: str
    marked_from: int
    marked_to: int
    acknowledged_at: datetime
    event_seq: int
    merged_with_existing: bool


@dataclass(frozen=True)
class ConstraintDraft:
    """One constraint of an onboarding request."""

    section_id: str
    boundary: str
    category: str


Registration = TypeVar("Registration")


@dataclass(frozen=True)
class Onboarded(Generic[Registration]):
    """A completed onboarding: the join's registration (the area's join record: a topic's `store.Joined`, a
    document's agent row; the event stores it as the join's answer), the role, the published constraints
    and the `pact.fabric.onboarded` event's sequence number."""

    fabric_id: str
    registration: Registration
    role: str
    constraints: list[records.Constraint]
    event_seq: int
    onboarded_at: datetime


# ---- reading -------------------------------------------------------------------------------------------


def _liveness(last_seen: datetime, now: datetime, timeout: int) -> Liveness:
    return Liveness.LIVE if now - last_seen <= timedelta(seconds=timeout) else Liveness.STALE


def _second(at: datetime) -> datetime:
    """Last-seen times are served to the second (§17.13: coarse, not a timing side channel)."""
    return at.replace(microsecond=0)


async def _presences(session: AsyncSession, fabric: Fabric) -> dict[str, SessionPresence]:
    rows = await session.scalars(
        select(SessionPresence).where(
            SessionPresence.resource_type == fabric.resource_type,
            SessionPresence.resource_id == fabric.resource_id,
        )
    )
    return {r.member_id: r for r in rows.all()}


def _presence(member: Member, row: SessionPresence | None, now: datetime, timeout: int) -> Presence:
    seen = row.last_seen if row is not None and row.last_seen is not None else member.joined_at
    seen = max(seen, member.joined_at)
    return Presence(
        last_seen=_second(seen),
        last_heartbeat_seq=row.last_heartbeat_seq if row is not None else None,
        attention_required=bool(row.attention_required) if row is not None else False,
        liveness=_liveness(seen, now, timeout),
        read_to_seq=row.read_to_seq if row is not None else 0,
    )


async def _constraint_counts(session: AsyncSession, fabric: Fabric) -> dict[str, int]:
    rows = await session.execute(
        select(SectionConstraint.agent_id, func.count(SectionConstraint.id))
        .where(
            SectionConstraint.resource_type == fabric.resource_type,
            SectionConstraint.resource_id == fabric.resource_id,
        )
        .group_by(SectionConstraint.agent_id)
    )
    return {agent_id: int(n) for agent_id, n in rows.all()}


async def _views(
    session: AsyncSession, fabric: Fabric, caller: Member, pending: Sequence[Obligation], timeout: int
) -> list[MemberView]:
    now = utcnow()
    presences = await _presences(session, fabric)
    constraints = await _constraint_counts(session, fabric)
    owed: dict[str, int] = {}
    for o in pending:
        owed[o.member_id] = owed.get(o.member_id, 0) + 1
    principal = {
        m.id: principals.of_agent(m.id, row.principal_id if (row := presences.get(m.id)) else None)
        for m in fabric.members
    }
    views = []
    for m in fabric.members:
        row = presences.get(m.id)
        views.append(
            MemberView(
                member=m,
                principal_id=principal[m.id],
                pact_role=PactRole(row.pact_role) if row is not None and row.pact_role else m.pact_role,
                contact=dict(row.contact) if row is not None and row.contact else None,
                presence=_presence(m, row, now, timeout),
                cross_org=principals.cross_org(caller.org, principal[caller.id], m.org, principal[m.id]),
                pending_obligations=owed.get(m.id, 0),
                constraints=constraints.get(m.id, 0),
            )
        )
    return views


async def _count(session: AsyncSession, stmt: Any) -> int:
    return int(await session.scalar(stmt) or 0)


async def phase_of(session: AsyncSession, fabric: Fabric) -> tuple[Phase, int, int]:
    """The resource's phase, with its pending proposals and open intents (§4.4.1), from its real state:
    closed if the area says so; escalated while a question or an objected proposal waits for a person;
    negotiating while proposals are pending or intents open; converged once something settled (or the
    area's own consensus) with nothing pending; forming before."""
    of_resource = (Proposal.resource_type == fabric.resource_type, Proposal.resource_id == fabric.resource_id)
    open_proposals = await _count(
        session, select(func.count(Proposal.id)).where(*of_resource, Proposal.status.in_(OPEN_STATUSES))
    )
    # An intent is open until a proposal on its section settles after it was declared.
    settled_since = exists().where(
        *of_resource,
        Proposal.section_id == SectionIntent.section_id,
        Proposal.status.in_(SETTLED_STATUSES),
        Proposal.resolved_at >= SectionIntent.created_at,
    )
    open_intents = await _count(
        session,
        select(func.count(SectionIntent.id)).where(
            SectionIntent.resource_type == fabric.resource_type,
            SectionIntent.resource_id == fabric.resource_id,
            ~settled_since,
        ),
    )
    if fabric.closed:
        return Phase.CLOSED, open_proposals, open_intents
    waiting = await _count(
        session,
        select(func.count(Escalation.id)).where(
            Escalation.resource_type == fabric.resource_type,
            Escalation.resource_id == fabric.resource_id,
            Escalation.status == "open",
        ),
    ) + await _count(
        session, select(func.count(Proposal.id)).where(*of_resource, Proposal.status == "objected")
    )
    if waiting:
        return Phase.ESCALATED, open_proposals, open_intents
    if open_proposals or open_intents:
        return Phase.NEGOTIATING, open_proposals, open_intents
    settled = fabric.settled or bool(
        await _count(
            session,
            select(func.count(Proposal.id)).where(*of_resource, Proposal.status.in_(SETTLED_STATUSES)),
        )
    )
    return (Phase.CONVERGED if settled else Phase.FORMING), open_proposals, open_intents


async def with_outcome(session: AsyncSession, fabric: Fabric, signal: Signal) -> Signal:
    """A done signal with what PACT's `/done` answers besides: whom the agent acts for and the resource's
    phase after it (`converged` once nothing is pending and something settled)."""
    phase, _proposals, _intents = await phase_of(session, fabric)
    principal = await profiles.principal_of(
        session, fabric.resource_type, fabric.resource_id, signal.completion.agent_id
    )
    return replace(signal, principal_id=principal, phase=phase)


async def latest_seq(session: AsyncSession, fabric: Fabric) -> int:
    return (await events.last_numbers(session, [fabric.stream])).get(fabric.stream, 0)


def parse_include(raw: str | None) -> frozenset[StatusPart]:
    """`include=members,phase,…` (§4.4.1); nothing: every part. An unknown part is a 400 naming it."""
    if raw is None or not raw.strip():
        return ALL_PARTS
    parts: set[StatusPart] = set()
    for item in (p.strip() for p in raw.split(",")):
        if not item:
            continue
        try:
            parts.add(StatusPart(item))
        except ValueError:
            raise BadRequest(
                f"include: unknown part {item!r}; known: {', '.join(p.value for p in StatusPart)}",
                field="include",
            ) from None
    return frozenset(parts) or ALL_PARTS


async def status(
    session: AsyncSession, fabric: Fabric, caller_id: str, parts: frozenset[StatusPart], timeout: int
) -> Status:
    """The whole-resource snapshot (§4.4.1), for a member only (403 agent.not_joined otherwise). Every
    pending obligation is listed: their creation and discharge are events every member may read already
    (§17.13 filters only what the caller could not learn otherwise); cross-org members' names are elided.
    A member that left is no longer listed, nor are its obligations (the proposal's end discharges them)."""
    caller = fabric.member(caller_id)
    pending = await obligations.pending(session, fabric.resource_type, fabric.resource_id)
    views = await _views(session, fabric, caller, pending, timeout)
    phase, open_proposals, open_intents = await phase_of(session, fabric)
    return Status(
        fabric_id=fabric.resource_id,
        parts=parts,
        phase=phase,
        latest_seq=await latest_seq(session, fabric),
        members=views,
        obligations=[o for o in pending if o.member_id in {m.id for m in fabric.members}],
        open_proposals=open_proposals,
        open_intents=open_intents,
        heartbeat_timeout_seconds=timeout,
        snapshot_at=utcnow(),
    )


async def manifest(session: AsyncSession, fabric: Fabric, caller_id: str, timeout: int) -> Manifest:
    """The caller-scoped view (§4.4.2): the caller in full, the constraints that bind it (its own and its
    organisation's; a cross-org member's are counted on that member), its pending obligations, the other
    members as counterparties (reduced across organisations), and the events it has not marked read."""
    caller = fabric.member(caller_id)
    pending = await obligations.pending(session, fabric.resource_type, fabric.resource_id)
    views = await _views(session, fabric, caller, pending, timeout)
    me = next(v for v in views if v.member.id == caller_id)
    same_org = {v.member.id for v in views if not v.cross_org}
    rows = await session.scalars(
        select(SectionConstraint)
        .where(
            SectionConstraint.resource_type == fabric.resource_type,
            SectionConstraint.resource_id == fabric.resource_id,
            SectionConstraint.agent_id.in_(same_org),
        )
        .order_by(SectionConstraint.created_at, SectionConstraint.id)
    )
    constraints = [
        ConstraintView(c.id, c.section_id, c.boundary, c.kind, c.agent_id == caller_id) for c in rows.all()
    ]
    phase, _p, _i = await phase_of(session, fabric)
    latest = await latest_seq(session, fabric)
    read_to = me.presence.read_to_seq
    return Manifest(
        fabric_id=fabric.resource_id,
        caller=me,
        phase=phase,
        constraints_on_caller=constraints,
        obligations=[o for o in pending if o.member_id == caller_id],
        counterparties=[v for v in views if v.member.id != caller_id],
        latest_seq=latest,
        unread_from=read_to + 1 if latest > read_to else None,
        unread_to=latest if latest > read_to else None,
        heartbeat_timeout_seconds=timeout,
        snapshot_at=utcnow(),
    )


# ---- writing: presence, heartbeat, mark-read -----------------------------------------------------------


async def _presence_row(session: AsyncSession, fabric: Fabric, member_id: str) -> SessionPresence:
    """The member's presence row, created if need be, locked for this transaction."""
    await session.execute(
        sqlutil.insert(session, SessionPresence)
        .values(
            resource_type=fabric.resource_type,
            resource_id=fabric.resource_id,
            member_id=member_id,
            attention_required=False,
            read_to_seq=0,
        )
        .on_conflict_do_nothing()
    )
    row = await session.scalar(
        for_update(
            select(SessionPresence).where(
                SessionPresence.resource_type == fabric.resource_type,
                SessionPresence.resource_id == fabric.resource_id,
                SessionPresence.member_id == member_id,
            )
        )
    )
    assert isinstance(row, SessionPresence)
    return row


async def enrol(
    session: AsyncSession,
    fabric: Fabric,
    member_id: str,
    *,
    principal: str | None,
    pact_role: PactRole | None = None,
    contact: Mapping[str, str] | None = None,
    seen_at: datetime | None = None,
) -> str:
    """Record a joining member's session profile: the principal its credential acts for, the PACT role and
    contact it declared (a rejoin replaces them: it declares afresh), and that it was seen now (or at
    `seen_at`); the principal it acts for, as sessions serve it."""
    row = await _presence_row(session, fabric, member_id)
    row.principal_id = principal
    row.pact_role = pact_role.value if pact_role is not None else None
    row.contact = {k: v for k, v in contact.items() if v} or None if contact else None
    row.last_seen = seen_at or utcnow()
    return principals.of_agent(member_id, principal)


async def purge_heartbeats(session: AsyncSession) -> int:
    """Heartbeat receipts received before the idempotency window twice over: a repeat of their id is a new
    heartbeat by then (heartbeat() makes its receipt anew), so they say nothing more. The sweep keeps the
    table to the receipts that can still answer a repeat."""
    cutoff = utcnow() - 2 * IDEMPOTENCY_WINDOW
    return await execute_counted(
        session, delete(HeartbeatReceipt).where(HeartbeatReceipt.received_at < cutoff)
    )


async def heartbeat(
    session: AsyncSession,
    ctx: Context,
    fabric: Fabric,
    member_id: str,
    *,
    client_heartbeat_id: str,
    attention_required: bool,
    observed_event_id: str | None,
    timeout: int,
) -> Heartbeat:
    """Record the member's heartbeat (§4.4.3) and answer the resource's liveness view. The first heartbeat
    of a (member, client_heartbeat_id) records `pact.agent.heartbeat-received` (and
    `pact.agent.attention-required` when asked); a repeat within the window gets the same answer and
    records nothing."""
    fabric.member(member_id)
    observed = (
        events.parse_cursor(observed_event_id, field="client_observed_event_id")
        if observed_event_id is not None
        else None
    )
    now = utcnow()
    key = (
        HeartbeatReceipt.resource_type == fabric.resource_type,
        HeartbeatReceipt.resource_id == fabric.resource_id,
        HeartbeatReceipt.member_id == member_id,
        HeartbeatReceipt.client_heartbeat_id == client_heartbeat_id,
    )
    receipt = (
        sqlutil.insert(session, HeartbeatReceipt)
        .values(
            resource_type=fabric.resource_type,
            resource_id=fabric.resource_id,
            member_id=member_id,
            client_heartbeat_id=client_heartbeat_id,
            received_at=now,
        )
        .on_conflict_do_nothing()
        .returning(HeartbeatReceipt.id)
    )
    inserted = await session.scalar(receipt)
    earlier = None
    if inserted is None:
        earlier = await session.scalar(for_update(select(HeartbeatReceipt).where(*key)))
        if earlier is None:  # purged (long past its window) between the two statements: a new heartbeat
            inserted = await session.scalar(receipt)
            if inserted is None:  # a racing repeat made it anew meanwhile: take that one
                earlier = await session.scalar(for_update(select(HeartbeatReceipt).where(*key)))
    if inserted is None:
        if earlier is None:
            raise Conflict(
                "this heartbeat raced with another of the same client_heartbeat_id; send it again",
                code="heartbeat.retry",
            )
        if earlier.response is not None and now - earlier.received_at <= IDEMPOTENCY_WINDOW:
            return Heartbeat.replay(earlier.response)
        earlier.received_at = now  # past the window: a new heartbeat under the old id
        inserted = earlier.id
    row = await _presence_row(session, fabric, member_id)
    data = {
        "member_id": member_id,
        "client_heartbeat_id": client_heartbeat_id,
        "attention_required": attention_required,
        "client_observed_event_id": observed_event_id,
    }
    seq = await events.append_numbered(
        session, fabric.stream, "pact.agent.heartbeat-received", ctx, data=data
    )
    if attention_required:
        seq = await events.append_numbered(
            session, fabric.stream, "pact.agent.attention-required", ctx, data={"member_id": member_id}
        )
    row.last_seen = now
    row.last_heartbeat_seq = seq
    row.attention_required = attention_required
    await session.flush()
    presences = await _presences(session, fabric)
    pending = await obligations.pending(
        session, fabric.resource_type, fabric.resource_id, member_id=member_id
    )
    members = []
    for m in fabric.members:
        p = _presence(m, presences.get(m.id), now, timeout)
        members.append(Liveliness(m.id, p.last_seen, p.attention_required, p.liveness))
    answer = Heartbeat(
        fabric_id=fabric.resource_id,
        client_heartbeat_id=client_heartbeat_id,
        received_at=_second(now),
        latest_seq=seq,
        caller_last_seen=_second(now),
        members=members,
        pending_obligations=len(pending),
        drift=max(0, seq - observed) if observed is not None else None,
    )
    await session.execute(
        update(HeartbeatReceipt).where(HeartbeatReceipt.id == inserted).values(response=answer.stored())
    )
    return answer


def _bound(event_id: str | None, number: int | None, name: str) -> int | None:
    """One end of a mark-read range from its event id and/or its sequence number (both: they must agree)."""
    by_id = events.parse_cursor(event_id, field=f"{name}_event_id") if event_id is not None else None
    if by_id is not None and number is not None and by_id != number:
        raise Unprocessable(
            f"{name}_event_id {event_id} and {name}_sequence_number {number} name different events",
            code="mark-read.invalid_range",
            field=f"{name}_sequence_number",
        )
    return by_id if by_id is not None else number


async def mark_read(
    session: AsyncSession,
    ctx: Context,
    fabric: Fabric,
    member_id: str,
    *,
    from_event_id: str | None,
    to_event_id: str | None,
    from_seq: int | None,
    to_seq: int | None,
) -> MarkRead:
    """The member acknowledges the events [from, to] (§4.4.4). Its high-water mark only moves forward: a
    range it already covers changes nothing and answers the event that recorded it; a range reaching
    further records one `pact.agent.mark-read` with the union of the prior cursor and the new range."""
    fabric.member(member_id)
    start = _bound(from_event_id, from_seq, "from")
    end = _bound(to_event_id, to_seq, "to")
    if start is None or end is None:
        raise Unprocessable(
            "give the range: from_event_id and to_event_id (or from_sequence_number and to_sequence_number)",
            code="mark-read.invalid_range",
            field="from_event_id" if start is None else "to_event_id",
        )
    latest = await latest_seq(session, fabric)
    if start < 1 or start > end:
        raise Unprocessable(
            f"the range starts after it ends or before the first event (from {start}, to {end})",
            code="mark-read.invalid_range",
            field="from_event_id",
        )
    if end > latest:
        raise Unprocessable(
            f"event {cursor_of(end)} does not exist on this {fabric.resource_type} (its last is "
            f"{cursor_of(latest)})",
            code="mark-read.invalid_range",
            field="to_event_id",
        )
    row = await _presence_row(session, fabric, member_id)
    now = utcnow()
    if row.read_event_seq is not None and end <= row.read_to_seq:
        return MarkRead(
            fabric_id=fabric.resource_id,
            member_id=member_id,
            marked_from=row.read_from_seq or start,
            marked_to=row.read_to_seq,
            acknowledged_at=_second(row.read_at or now),
            event_seq=row.read_event_seq,
            merged_with_existing=True,
        )
    merged = row.read_event_seq is not None and start <= row.read_to_seq + 1
    marked_from = min(start, row.read_from_seq or start) if merged else start
    seq = await events.append_numbered(
        session,
        fabric.stream,
        "pact.agent.mark-read",
        ctx,
        data={
            "caller_member_id": member_id,
            "marked_from_sequence_number": marked_from,
            "marked_to_sequence_number": end,
        },
    )
    row.read_from_seq = marked_from
    row.read_to_seq = end
    row.read_event_seq = seq
    row.read_at = now
    return MarkRead(
        fabric_id=fabric.resource_id,
        member_id=member_id,
        marked_from=marked_from,
        marked_to=end,
        acknowledged_at=_second(now),
        event_seq=seq,
        merged_with_existing=merged,
    )


# ---- onboarding ----------------------------------------------------------------------------------------


def refuse(index: int, code: OnboardRefusal, description: str) -> Unprocessable:
    """The 422 of a refused onboarding: names the constraint (its index) and why; nothing was written."""
    return Unprocessable(
        f"constraints[{index}]: {description}; nothing was joined or published",
        code=code.value,
        field=f"constraints[{index}]",
        status="rejected",
        rejection_reason=code.value,
        rejected_constraint_index=index,
        errors=[{"code": code.value, "description": description, "metadata": {"index": index}}],
        constraint_conflicts=[f"constraints[{index}]: {description}"],
    )


def check_constraints(
    markdown: str,
    drafts: Sequence[ConstraintDraft],
    *,
    may_publish: bool,
    role: str,
    categories: Collection[str] | None = None,
    ceilings: Mapping[str, int] | None = None,
) -> None:
    """Every constraint of an onboarding, before anything is written (§4.4.5 step 2): first the resource's
    policy over the whole request (`ceilings`, see `check_ceilings`), then each constraint: its section
    exists, its category is one the resource knows, and the joining role may publish constraints at all."""
    check_ceilings(drafts, ceilings or {})
    for index, draft in enumerate(drafts):
        if not may_publish:
            raise refuse(
                index,
                OnboardRefusal.INCOMPATIBLE,
                f"the role {role} may not publish constraints; join with a writing role or without "
                "constraints",
            )
        if sections.find(markdown, draft.section_id) is None:
            raise refuse(
                index, OnboardRefusal.INVALID, f"section {draft.section_id} does not exist; read the sections"
            )
        if categories is not None and draft.category not in categories:
            raise refuse(
                index,
                OnboardRefusal.INVALID,
                f"category {draft.category!r} is not one of {', '.join(sorted(categories))}",
            )
        for earlier in drafts[:index]:
            if (earlier.section_id, earlier.boundary) == (draft.section_id, draft.boundary):
                raise refuse(
                    index,
                    OnboardRefusal.INCOMPATIBLE,
                    f"repeats an earlier constraint of this request on {draft.section_id}",
                )


def ceiling_name(section_id: str) -> str:
    """The policy name a constraint's section is capped by: `sec:disclosure-ceiling` and
    `disclosure-ceiling` are both `max_disclosure_ceiling`."""
    return "max_" + section_id.removeprefix("sec:").replace("-", "_").replace(":", "_")


def check_ceilings(drafts: Sequence[ConstraintDraft], ceilings: Mapping[str, int]) -> None:
    """A resource's disclosure policy (§4.4.5 "the resource's constraint-acceptance rules"): a constraint
    whose section is capped (`max_<section>`) and whose boundary is a number above the cap is incompatible
    with the resource, whatever else is wrong with the request."""
    for index, draft in enumerate(drafts):
        cap = ceilings.get(ceiling_name(draft.section_id))
        value = draft.boundary.strip()
        if cap is not None and value.lstrip("-").isdigit() and int(value) > cap:
            raise refuse(
                index,
                OnboardRefusal.INCOMPATIBLE,
                f"{draft.section_id} {value} exceeds the resource's policy maximum of {cap}",
            )


async def record_onboarded(
    session: AsyncSession,
    ctx: Context,
    fabric: Fabric,
    *,
    registration: dict[str, Any],
    member_id: str,
    role: str,
    constraint_ids: Sequence[str],
    principal: str,
) -> int:
    """The one `pact.fabric.onboarded` event of an onboarding (§4.4.5 step 4), written now so that the
    constraints published after it carry its id as their correlationId; its sequence number. Its data is a
    stored format (hashed into the chain): its keys never change."""
    return await events.append_numbered(
        session,
        fabric.stream,
        "pact.fabric.onboarded",
        ctx,
        correlation_id=member_id,
        data={
            "fabricId": fabric.resource_id,
            "registrationId": member_id,
            "principalId": principal,
            "role": role,
            "constraintIds": list(constraint_ids),
            "registration": registration,
        },
    )
