"""The wire shapes of PACT v2.0.3 session awareness (§4.4), the same on both apps: `_status`, `manifest`,
`_heartbeat`, `mark-read` and the parts of `_onboard` both share. PACT names its fields in snake_case here
(its schemas spec/v2.0/schemas/fabric-*.json, heartbeat-*, mark-read-*, onboard-*, pending-obligation),
and these answers keep them; the additive keyed maps (`members_by_principal`, `counterparties_by_principal`,
`obligations_by_ref`) and liveness fields are what the PACT conformance vectors read.

A field the caller may not see (§17.13: a cross-org counterparty's name and enumerations) is omitted, not
null: these answers are sent without their None fields (`sparse`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from domain.consensus import records
from domain.consensus import sessions as s
from domain.consensus.obligations import DischargeKind, Obligation, ObligationKind, ObligationStatus
from domain.consensus.phases import Phase
from domain.documents.sharing import EMAIL_PATTERN
from domain.kernel.clock import iso_z, utcnow
from domain.kernel.errors import Unprocessable
from domain.kernel.event_record import cursor_of
from domain.kernel.events import MAX_SEQ
from web.kernel.events import CURSOR_PATTERN
from web.kernel.wire import Exact, Rule, Text, Timestamp


def sparse(model: BaseModel) -> dict[str, Any]:
    """The model's wire body with its None fields left out (elided, §17.13); the operation then writes it
    through its response model."""
    return model.model_dump(mode="json", exclude_none=True)


def _event_id(seq: int) -> str | None:
    return cursor_of(seq) if seq > 0 else None


# ---- requests -------------------------------------------------------------------------------------------


class Request(BaseModel):
    """PACT clients send fields Concord does not use (authorization_proof, verifier_id …): ignored."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


_PART = "|".join(p.value for p in s.StatusPart)


class StatusQuery(Request):
    include: str | None = Field(
        default=None,
        max_length=200,
        pattern=rf"^(?:(?:{_PART})(?: *, *(?:{_PART}))*)?$",
        description="Comma-separated parts: members, phase, latest_event, obligations, activity "
        "(default: all).",
    )


class HeartbeatBody(Request):
    client_heartbeat_id: Text = Field(
        min_length=1,
        max_length=80,
        description="Chosen by the caller (a UUID); a repeat within the idempotency window gets the first "
        "answer and records nothing.",
    )
    attention_required: bool = Field(default=False, description="Flag active presence to the others.")
    client_observed_event_id: str | None = Field(
        default=None,
        max_length=20,
        pattern=CURSOR_PATTERN,
        description="The latest event the caller processed (n or evt_n).",
    )


# A mark-read's range is whole: both event ids or both sequence numbers (or all four, which must agree: the
# domain checks that, a schema cannot). Not in an MCP tool's arguments (no top-level anyOf there).
MARK_READ_RANGE: dict[str, Any] = {
    "anyOf": [
        {"required": [low, high], "properties": {low: {"type": kind}, high: {"type": kind}}}
        for low, high, kind in (
            ("from_event_id", "to_event_id", "string"),
            ("from_sequence_number", "to_sequence_number", "integer"),
        )
    ]
}


class MarkReadBody(Request):
    """The range by event ids or by sequence numbers (both: they must agree); inclusive."""

    model_config = ConfigDict(json_schema_extra=MARK_READ_RANGE)

    from_event_id: str | None = Field(
        default=None, max_length=20, pattern=CURSOR_PATTERN, description="evt_n or n"
    )
    to_event_id: str | None = Field(
        default=None, max_length=20, pattern=CURSOR_PATTERN, description="evt_n or n"
    )
    from_sequence_number: int | None = Field(default=None, ge=0, le=MAX_SEQ)
    to_sequence_number: int | None = Field(default=None, ge=0, le=MAX_SEQ)


_EMAIL = Rule(EMAIL_PATTERN, "must be an email address such as ops@example.org")
_HOOK = Rule(r"^https://[^\s/?#]+[^\s]*$", "must be an https:// URL")


class ContactIn(Request):
    """Contact metadata a member may give when joining: where a person reaches the agent's operator. Shown
    to the member itself and to members of its organisation, never across organisations (§17.13). Only
    these two fields: another is refused, not silently dropped."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    email: Annotated[str, _EMAIL] | None = Field(default=None, max_length=320)
    escalation_hook: Annotated[str, _HOOK] | None = Field(
        default=None, max_length=2_000, description="An https:// URL where alerts for the operator go."
    )

    def kept(self) -> dict[str, str] | None:
        """What is kept: the fields given, or nothing."""
        return self.model_dump(exclude_none=True) or None


# ---- obligations ---------------------------------------------------------------------------------------


class ObligationOut(Exact):
    """A pending obligation (§6.5, pending-obligation.json), with its status."""

    id: str
    fabric_id: str
    member_id: str
    kind: ObligationKind
    event_ref: str = Field(description="What created it: the proposal's id for a vote.")
    created_at: Timestamp
    due_by: Timestamp | None = None
    overdue: bool
    discharged_at: Timestamp | None = None
    discharge_kind: DischargeKind | None = None
    discharge_event_ref: str | None = None
    status: ObligationStatus
    proposal_id: str | None = None
    description: str = Field(description="What is owed, in words (the PACT CLI's `where` prints it).")

    @classmethod
    def of(cls, o: Obligation) -> ObligationOut:
        return cls(
            id=o.id,
            fabric_id=o.resource_id,
            member_id=o.member_id,
            kind=o.kind,
            event_ref=o.event_ref,
            created_at=iso_z(o.created_at),
            due_by=iso_z(o.due_by),
            overdue=o.overdue(utcnow()),
            discharged_at=iso_z(o.discharged_at),
            discharge_kind=o.discharge_kind,
            discharge_event_ref=o.discharge_event_ref,
            status=o.status,
            proposal_id=o.proposal_id,
            description=f"{o.kind} on proposal {o.proposal_id}"
            if o.proposal_id
            else f"{o.kind} ({o.event_ref})",
        )


def _by_ref(items: list[ObligationOut]) -> dict[str, ObligationOut]:
    return {o.event_ref: o for o in items}


# ---- _status -------------------------------------------------------------------------------------------


class MemberOut(Exact):
    """A member in `_status`: identity with `members`, liveness with `activity`; a cross-org member's
    agent_name is elided (display_name stays, §17.13)."""

    agent_id: str
    principal_id: str
    display_name: str | None = None
    agent_name: str | None = None
    role: s.PactRole | None = Field(
        default=None, description="The PACT role it declared or its role implies."
    )
    resource_role: str | None = Field(default=None, description="Its role on the topic or the document.")
    trust_level: s.TrustLevel | None = None
    joined_at: Timestamp | None = None
    cross_org: bool | None = None
    disclosure_level: s.DisclosureLevel | None = None
    last_seen: Timestamp | None = None
    last_heartbeat_seq: int | None = None
    attention_required: bool | None = None
    liveness: s.Liveness | None = None
    evicted: bool | None = Field(default=None, description="Always false: staleness never evicts.")
    pending_obligation_count: int | None = None

    @classmethod
    def of(cls, v: s.MemberView, parts: frozenset[s.StatusPart]) -> MemberOut:
        identity = s.StatusPart.MEMBERS in parts
        activity = s.StatusPart.ACTIVITY in parts
        p = v.presence
        return cls(
            agent_id=v.member.id,
            principal_id=v.principal_id,
            display_name=v.member.name if identity else None,
            agent_name=v.member.name if identity and not v.cross_org else None,
            role=v.pact_role if identity else None,
            resource_role=v.member.role if identity else None,
            trust_level=v.member.trust_level if identity else None,
            joined_at=iso_z(v.member.joined_at) if identity else None,
            cross_org=v.cross_org if identity else None,
            disclosure_level=v.disclosure if identity else None,
            last_seen=iso_z(p.last_seen) if activity else None,
            last_heartbeat_seq=p.last_heartbeat_seq if activity else None,
            attention_required=p.attention_required if activity else None,
            liveness=p.liveness if activity else None,
            evicted=False if activity else None,
            pending_obligation_count=v.pending_obligations if identity or activity else None,
        )


class StatusOut(Exact):
    """The whole-resource snapshot (§4.4.1, fabric-status.json), parts as `include` asked."""

    fabric_id: str
    spec_version: str
    phase: Phase | None = None
    latest_event_id: str | None = None
    latest_sequence_number: int | None = None
    members: list[MemberOut] | None = None
    members_by_principal: dict[str, MemberOut] | None = None
    pending_obligations: list[ObligationOut] | None = None
    open_proposals: int | None = None
    open_intents: int | None = None
    heartbeat_timeout_seconds: int
    snapshot_at: Timestamp

    @classmethod
    def of(cls, st: s.Status) -> StatusOut:
        parts = st.parts
        members = [MemberOut.of(v, parts) for v in st.members]
        listed = s.StatusPart.MEMBERS in parts or s.StatusPart.ACTIVITY in parts
        latest = s.StatusPart.LATEST_EVENT in parts
        phase = s.StatusPart.PHASE in parts
        return cls(
            fabric_id=st.fabric_id,
            spec_version=s.SPEC_VERSION,
            phase=st.phase if phase else None,
            latest_event_id=_event_id(st.latest_seq) if latest else None,
            latest_sequence_number=st.latest_seq if latest else None,
            members=members if listed else None,
            members_by_principal={m.principal_id: m for m in members} if listed else None,
            pending_obligations=[ObligationOut.of(o) for o in st.obligations]
            if s.StatusPart.OBLIGATIONS in parts
            else None,
            open_proposals=st.open_proposals if phase else None,
            open_intents=st.open_intents if phase else None,
            heartbeat_timeout_seconds=st.heartbeat_timeout_seconds,
            snapshot_at=iso_z(st.snapshot_at),
        )


# ---- manifest ------------------------------------------------------------------------------------------


class ConstraintOnCaller(Exact):
    constraint_id: str
    section_id: str
    boundary: str
    category: str
    published_by_self: bool

    @classmethod
    def of(cls, c: s.ConstraintView) -> ConstraintOnCaller:
        return cls(
            constraint_id=c.id,
            section_id=c.section_id,
            boundary=c.boundary,
            category=c.category,
            published_by_self=c.published_by_self,
        )


class ContactOut(Exact):
    """Contact metadata a member gave when joining (Concord's extension of §4.4.2; PII under §17.13)."""

    email: str | None = None
    escalation_hook: str | None = None

    @classmethod
    def of(cls, contact: Mapping[str, str] | None) -> ContactOut | None:
        return (
            cls(email=contact.get("email"), escalation_hook=contact.get("escalation_hook"))
            if contact
            else None
        )


class CallerOut(Exact):
    """The caller, in full."""

    agent_id: str
    registration_id: str
    principal_id: str
    agent_name: str
    display_name: str
    role: s.PactRole
    resource_role: str
    contact: ContactOut | None = None
    trust_level: s.TrustLevel
    joined_at: Timestamp
    last_seen: Timestamp
    liveness: s.Liveness
    attention_required: bool
    read_to_sequence_number: int
    obligations: list[ObligationOut]
    obligations_by_ref: dict[str, ObligationOut] = Field(description="The obligations keyed by event_ref.")


class ConstraintsSummary(Exact):
    count: int


class ObligationsSummary(Exact):
    pending_count: int


class CounterpartyOut(Exact):
    """Another member: in full from the caller's organisation; across organisations reduced (§17.13):
    agent_name and enumerations elided, counts only."""

    agent_id: str
    principal_id: str
    display_name: str
    agent_name: str | None = None
    role: s.PactRole
    resource_role: str | None = None
    trust_level: s.TrustLevel
    last_seen: Timestamp
    liveness: s.Liveness
    attention_required: bool
    disclosure_level: s.DisclosureLevel
    cross_org: bool
    contact_visible: bool = Field(
        description="Whether `contact` is shown: a member of the caller's organisation's, when it gave one; "
        "never a cross-org member's (§17.13)."
    )
    contact: ContactOut | None = None
    pending_obligation_count: int
    constraints_summary: ConstraintsSummary
    obligations_summary: ObligationsSummary

    @classmethod
    def of(cls, v: s.MemberView) -> CounterpartyOut:
        return cls(
            agent_id=v.member.id,
            principal_id=v.principal_id,
            display_name=v.member.name,
            agent_name=None if v.cross_org else v.member.name,
            role=v.pact_role,
            resource_role=None if v.cross_org else v.member.role,
            trust_level=v.member.trust_level,
            last_seen=iso_z(v.presence.last_seen),
            liveness=v.presence.liveness,
            attention_required=v.presence.attention_required,
            disclosure_level=v.disclosure,
            cross_org=v.cross_org,
            contact_visible=bool(v.contact) and not v.cross_org,
            contact=None if v.cross_org else ContactOut.of(v.contact),
            pending_obligation_count=v.pending_obligations,
            constraints_summary=ConstraintsSummary(count=v.constraints),
            obligations_summary=ObligationsSummary(pending_count=v.pending_obligations),
        )


class ManifestOut(Exact):
    """The caller-scoped manifest (§4.4.2, fabric-manifest.json)."""

    fabric_id: str
    spec_version: str
    phase: Phase
    caller_role: s.PactRole
    caller: CallerOut
    constraints_on_caller: list[ConstraintOnCaller]
    pending_obligations: list[ObligationOut]
    obligations_by_ref: dict[str, ObligationOut]
    counterparties: list[CounterpartyOut]
    counterparties_by_principal: dict[str, CounterpartyOut]
    members: list[str] = Field(description="The agent ids of every member, the caller's first.")
    latest_event_id: str | None = None
    latest_sequence_number: int
    unread_event_id_from: str | None = None
    unread_event_id_to: str | None = None
    unread_count: int
    heartbeat_timeout_seconds: int
    snapshot_at: Timestamp

    @classmethod
    def of(cls, m: s.Manifest) -> ManifestOut:
        me = m.caller
        mine = [ObligationOut.of(o) for o in m.obligations]
        others = [CounterpartyOut.of(v) for v in m.counterparties]
        return cls(
            fabric_id=m.fabric_id,
            spec_version=s.SPEC_VERSION,
            phase=m.phase,
            caller_role=me.pact_role,
            caller=CallerOut(
                agent_id=me.member.id,
                registration_id=me.member.id,
                principal_id=me.principal_id,
                agent_name=me.member.name,
                display_name=me.member.name,
                role=me.pact_role,
                resource_role=me.member.role,
                contact=ContactOut.of(me.contact),
                trust_level=me.member.trust_level,
                joined_at=iso_z(me.member.joined_at),
                last_seen=iso_z(me.presence.last_seen),
                liveness=me.presence.liveness,
                attention_required=me.presence.attention_required,
                read_to_sequence_number=me.presence.read_to_seq,
                obligations=mine,
                obligations_by_ref=_by_ref(mine),
            ),
            constraints_on_caller=[ConstraintOnCaller.of(c) for c in m.constraints_on_caller],
            pending_obligations=mine,
            obligations_by_ref=_by_ref(mine),
            counterparties=others,
            counterparties_by_principal={c.principal_id: c for c in others},
            members=[me.member.id, *(c.agent_id for c in others)],
            latest_event_id=_event_id(m.latest_seq),
            latest_sequence_number=m.latest_seq,
            unread_event_id_from=cursor_of(m.unread_from) if m.unread_from else None,
            unread_event_id_to=cursor_of(m.unread_to) if m.unread_to else None,
            unread_count=(m.unread_to - m.unread_from + 1) if m.unread_from and m.unread_to else 0,
            heartbeat_timeout_seconds=m.heartbeat_timeout_seconds,
            snapshot_at=iso_z(m.snapshot_at),
        )


# ---- _heartbeat ----------------------------------------------------------------------------------------


class MemberLiveness(Exact):
    agent_id: str
    last_seen: Timestamp
    attention_required: bool
    liveness: s.Liveness


class HeartbeatOut(Exact):
    """The heartbeat's answer (§4.4.3, heartbeat-response.json); `replayed`: a repeat got the first one."""

    fabric_id: str
    client_heartbeat_id: str
    server_received_at: Timestamp
    latest_event_id: str | None = None
    latest_sequence_number: int
    caller_last_seen: Timestamp
    members_liveness: list[MemberLiveness]
    pending_obligation_count: int
    drift_warning: str | None = None
    replayed: bool

    @classmethod
    def of(cls, h: s.Heartbeat) -> HeartbeatOut:
        drift = (
            f"{h.drift} event(s) after the one you observed; read them with GET …/events" if h.drift else None
        )
        return cls(
            fabric_id=h.fabric_id,
            client_heartbeat_id=h.client_heartbeat_id,
            server_received_at=iso_z(h.received_at),
            latest_event_id=_event_id(h.latest_seq),
            latest_sequence_number=h.latest_seq,
            caller_last_seen=iso_z(h.caller_last_seen),
            members_liveness=[
                MemberLiveness(
                    agent_id=m.member_id,
                    last_seen=iso_z(m.last_seen),
                    attention_required=m.attention_required,
                    liveness=m.liveness,
                )
                for m in h.members
            ],
            pending_obligation_count=h.pending_obligations,
            drift_warning=drift,
            replayed=h.replayed,
        )


# ---- mark-read -----------------------------------------------------------------------------------------


class MarkReadOut(Exact):
    """The read cursor after the call (§4.4.4, mark-read-response.json); `event_id` recorded it."""

    fabric_id: str
    caller_member_id: str
    marked_from_sequence_number: int
    marked_to_sequence_number: int
    marked_from_event_id: str
    marked_to_event_id: str
    acknowledged_at: Timestamp
    event_id: str
    merged_with_existing: bool

    @classmethod
    def of(cls, r: s.MarkRead) -> MarkReadOut:
        return cls(
            fabric_id=r.fabric_id,
            caller_member_id=r.member_id,
            marked_from_sequence_number=r.marked_from,
            marked_to_sequence_number=r.marked_to,
            marked_from_event_id=cursor_of(r.marked_from),
            marked_to_event_id=cursor_of(r.marked_to),
            acknowledged_at=iso_z(r.acknowledged_at),
            event_id=cursor_of(r.event_seq),
            merged_with_existing=r.merged_with_existing,
        )


# ---- _onboard ------------------------------------------------------------------------------------------


class AcceptedConstraint(Exact):
    constraint_id: str
    sectionId: str
    boundary: str
    category: str

    @classmethod
    def of(cls, c: records.Constraint) -> AcceptedConstraint:
        return cls(constraint_id=c.id, sectionId=c.section_id, boundary=c.boundary, category=c.kind)


class CommittedConstraint(Exact):
    """A constraint as the onboarding committed it, in §4.4.5's request shape (the vectors'
    `accepted_constraints`: what the caller declared, without the minted id)."""

    sectionId: str
    boundary: str


class OnboardedOut(Exact):
    """A completed onboarding (§4.4.5, onboard-response.json); `registration` is the app's join answer.
    The constraints are listed under PACT's name (`constraints`), the vectors' (`accepted_constraints`)
    and the CLI's (`declared_constraints`)."""

    status: str = Field(description="onboarded")
    membership_status: str
    fabric_id: str
    membership_id: str
    role: str
    constraints: list[AcceptedConstraint]
    accepted_constraints: list[CommittedConstraint]
    declared_constraints: list[AcceptedConstraint]
    onboarded_event_id: str
    onboarded_at: Timestamp

    @classmethod
    def fields(cls, o: s.Onboarded[Any], member_id: str) -> dict[str, Any]:
        accepted = [AcceptedConstraint.of(c) for c in o.constraints]
        return {
            "status": "onboarded",
            "membership_status": "onboarded",
            "fabric_id": o.fabric_id,
            "membership_id": member_id,
            "role": o.role,
            "constraints": accepted,
            "accepted_constraints": [
                CommittedConstraint(sectionId=c.sectionId, boundary=c.boundary) for c in accepted
            ],
            "declared_constraints": accepted,
            "onboarded_event_id": cursor_of(o.event_seq),
            "onboarded_at": iso_z(o.onboarded_at),
        }


class RefusalError(Exact):
    code: str
    description: str
    metadata: dict[str, Any]


class OnboardRejected(Exact):
    """A refused onboarding as §4.4.5 answers it (onboard-response.json's rejection case), with the
    app's `code` and `detail` beside it: which constraint (its index) and why; nothing was written."""

    status: str = Field(description="rejected")
    fabric_id: str
    rejection_reason: str
    rejected_constraint_index: int
    errors: list[RefusalError]
    code: str
    detail: str

    @classmethod
    def of(cls, exc: Unprocessable, fabric_id: str) -> OnboardRejected:
        return cls(
            status="rejected",
            fabric_id=fabric_id,
            rejection_reason=exc.extra["rejection_reason"],
            rejected_constraint_index=exc.extra["rejected_constraint_index"],
            errors=[RefusalError.model_validate(e) for e in exc.extra["errors"]],
            code=exc.code,
            detail=exc.detail,
        )


def is_refusal(exc: Unprocessable) -> bool:
    """Whether a 422 is an onboarding's constraint refusal (`sessions.refuse`)."""
    return "rejection_reason" in exc.extra


ONBOARD_ERRORS = {
    409: "Already joined (agent.already_joined)",
    422: "A constraint was refused (constraint.invalid or constraint.incompatible): the answer names it "
    "(rejected_constraint_index, errors); nothing was joined or published",
}
SESSION_ERRORS = {403: "Not a member (agent.not_joined; auth.forbidden on manifest)"}
