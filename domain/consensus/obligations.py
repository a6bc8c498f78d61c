"""Pending obligations (PACT v2.0.3 §6.5): what the protocol expects a member of a topic or a document to do
next, as rows, one per member and thing owed, each created and discharged with its event.

The consensus engine opens a `vote` obligation for every agent whose vote counts on a new proposal (the
resource's voters under its approval policy: none under `human-only`, where a person decides) and discharges
it when that agent approves, rejects or objects (`fulfilled`), and every obligation still open on a
proposal when the proposal stops taking votes: merged, rejected, objected, expired, superseded or withdrawn
(`superseded`). A discharge is one conditional UPDATE (`… WHERE discharged_at IS NULL RETURNING`), so a vote
and a merge racing on one proposal discharge each obligation once, and only the statement that discharged
it records its event.

Events (on the resource's stream, actor System): `pact.obligation.created` and `pact.obligation.discharged`,
whose data is the obligation as `_status` and `manifest` serve it, and whose `correlationId` is the
obligation's id (the chain of one obligation: created → discharged); `inResponseTo` is what created or
discharged it (the proposal's id)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus.session_models import PendingObligation
from domain.kernel import events, principals
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import SYSTEM
from domain.kernel.db import table_of
from domain.kernel.event_record import ActorKind
from domain.kernel.ids import new_id


class ObligationKind(StrEnum):
    """What discharges an obligation (§6.5): a vote; a response to a query or an escalation; a signature;
    an acknowledgement (mark-read). Concord creates `vote` obligations; the others are the protocol's."""

    VOTE = "vote"
    RESPOND = "respond"
    SIGN = "sign"
    ACK = "ack"


class DischargeKind(StrEnum):
    """How an obligation ended (§6.5)."""

    FULFILLED = "fulfilled"  # the member acted
    SUPERSEDED = "superseded"  # a later event made it moot (the proposal merged, expired, was withdrawn …)
    TIMED_OUT = "timed_out"
    ESCALATED = "escalated"


class ObligationStatus(StrEnum):
    PENDING = "pending"
    DISCHARGED = "discharged"


@dataclass(frozen=True)
class Obligation:
    id: str
    resource_type: str
    resource_id: str
    member_id: str
    kind: ObligationKind
    event_ref: str
    proposal_id: str | None
    created_at: datetime
    due_by: datetime | None
    discharged_at: datetime | None
    discharge_kind: DischargeKind | None
    discharge_event_ref: str | None
    principal_id: str  # whom the owing member acts for (domain/kernel/principals.py)

    @property
    def status(self) -> ObligationStatus:
        return ObligationStatus.PENDING if self.discharged_at is None else ObligationStatus.DISCHARGED

    def overdue(self, now: datetime) -> bool:
        return self.discharged_at is None and self.due_by is not None and self.due_by < now


def of(row: PendingObligation) -> Obligation:
    return Obligation(
        id=row.id,
        resource_type=row.resource_type,
        resource_id=row.resource_id,
        member_id=row.member_id,
        kind=ObligationKind(row.kind),
        event_ref=row.event_ref,
        proposal_id=row.proposal_id,
        created_at=row.created_at,
        due_by=row.due_by,
        discharged_at=row.discharged_at,
        discharge_kind=DischargeKind(row.discharge_kind) if row.discharge_kind else None,
        discharge_event_ref=row.discharge_event_ref,
        principal_id=principals.of_agent(row.member_id, row.principal_id),
    )


def payload(o: Obligation) -> dict[str, Any]:
    """The obligation as its events carry it: PACT's pending-obligation shape, the principal (as PACT and as
    the rest of Concord's event data spell it), and the shape again under `obligation` (where the conformance
    vectors look for it). A stored format (hashed into the chain): its keys never change."""
    shape = {
        "id": o.id,
        "fabric_id": o.resource_id,
        "member_id": o.member_id,
        "kind": str(o.kind),
        "event_ref": o.event_ref,
        "created_at": iso(o.created_at),
        "due_by": iso(o.due_by),
        "discharged_at": iso(o.discharged_at),
        "discharge_kind": str(o.discharge_kind) if o.discharge_kind else None,
        "discharge_event_ref": o.discharge_event_ref,
    }
    principal = o.principal_id
    return {**shape, "principal_id": principal, "principalId": principal, "obligation": dict(shape)}


async def _emit(session: AsyncSession, o: Obligation, type_: str, in_response_to: str | None) -> None:
    events.append(
        session,
        events.stream_of(o.resource_type, o.resource_id),
        type_,
        SYSTEM,
        data=payload(o),
        actor_kind=ActorKind.SYSTEM,
        correlation_id=o.id,
        in_response_to=in_response_to,
    )


async def open_votes(
    session: AsyncSession,
    resource_type: str,
    resource_id: str,
    *,
    proposal_id: str,
    members: Mapping[str, str | None],
    due_by: datetime | None,
) -> list[Obligation]:
    """A `vote` obligation on the proposal for each member (the proposal is new: none exists yet), written
    with one INSERT of all their rows (not the unit of work's flush); `members` maps each to the principal it
    joined with (None: its own)."""
    now = utcnow()
    created = [
        Obligation(
            id=new_id(),
            resource_type=resource_type,
            resource_id=resource_id,
            member_id=member_id,
            kind=ObligationKind.VOTE,
            event_ref=proposal_id,
            proposal_id=proposal_id,
            created_at=now,
            due_by=due_by,
            discharged_at=None,
            discharge_kind=None,
            discharge_event_ref=None,
            principal_id=principals.of_agent(member_id, members[member_id]),
        )
        for member_id in sorted(members)
    ]
    if not created:
        return []
    rows = [
        {
            **{name: getattr(o, name) for name in _OPENED},
            "kind": o.kind.value,
            "principal_id": members[o.member_id],  # as joined (None: its own), as the column keeps it
        }
        for o in created
    ]
    await session.execute(insert(_OBLIGATIONS), rows)
    for obligation in created:
        await _emit(session, obligation, "pact.obligation.created", proposal_id)
    return created


# The columns an opened obligation's row takes from it as they are (its kind and principal apart).
_OPENED = (
    "id",
    "resource_type",
    "resource_id",
    "member_id",
    "event_ref",
    "proposal_id",
    "created_at",
    "due_by",
)

_OBLIGATIONS = table_of(PendingObligation)
# What a discharge answers of each obligation it ended (the rest it set itself).
RETURNED = tuple(
    _OBLIGATIONS.c[name]
    for name in (
        "id",
        "resource_type",
        "resource_id",
        "member_id",
        "kind",
        "event_ref",
        "proposal_id",
        "created_at",
        "due_by",
        "principal_id",
    )
)


def _discharge_where(*where: Any) -> Any:
    """One conditional UPDATE ending the open obligations matching `where` (built once, run with
    parameters): discharged_at `d_now`, discharge_kind `d_kind`, discharge_event_ref the obligation's
    proposal (every discharge here names the proposal that ended it)."""
    return (
        update(_OBLIGATIONS)
        .where(*where, _OBLIGATIONS.c.discharged_at.is_(None))
        .values(
            discharged_at=bindparam("d_now"),
            discharge_kind=bindparam("d_kind"),
            discharge_event_ref=_OBLIGATIONS.c.proposal_id,
        )
        .returning(*RETURNED)
    )


_DISCHARGE_VOTE = _discharge_where(
    _OBLIGATIONS.c.proposal_id == bindparam("d_proposal"),
    _OBLIGATIONS.c.member_id == bindparam("d_member"),
    _OBLIGATIONS.c.kind == ObligationKind.VOTE.value,
)
_DISCHARGE_ONE = _discharge_where(_OBLIGATIONS.c.proposal_id == bindparam("d_proposal"))
_DISCHARGE_MANY = _discharge_where(_OBLIGATIONS.c.proposal_id.in_(bindparam("d_proposals", expanding=True)))


async def record_discharged(
    session: AsyncSession, rows: Sequence[Any], kind: DischargeKind, now: datetime
) -> list[Obligation]:
    """The obligations a discharge statement ended (its rows, with the `RETURNED` columns), each with its
    `pact.obligation.discharged` event, in a stable order; the statement may be another module's that
    discharges them beside its own work (domain/consensus/queries.py, a vote on PostgreSQL)."""
    discharged = [
        Obligation(
            id=r.id,
            resource_type=r.resource_type,
            resource_id=r.resource_id,
            member_id=r.member_id,
            kind=ObligationKind(r.kind),
            event_ref=r.event_ref,
            proposal_id=r.proposal_id,
            created_at=r.created_at,
            due_by=r.due_by,
            discharged_at=now,
            discharge_kind=kind,
            discharge_event_ref=r.proposal_id,
            principal_id=principals.of_agent(r.member_id, r.principal_id),
        )
        for r in sorted(rows, key=lambda r: (r.proposal_id or "", r.member_id, r.id))
    ]
    for obligation in discharged:
        await _emit(session, obligation, "pact.obligation.discharged", obligation.discharge_event_ref)
    return discharged


async def _discharge(
    session: AsyncSession, statement: Any, params: dict[str, Any], kind: DischargeKind
) -> list[Obligation]:
    """Discharge the open obligations the statement matches; an event for each that this statement
    discharged (one a concurrent statement discharged first is not returned here)."""
    now = utcnow()
    rows = (await session.execute(statement, {**params, "d_now": now, "d_kind": kind.value})).all()
    return await record_discharged(session, rows, kind, now)


async def discharge_vote(session: AsyncSession, proposal_id: str, member_id: str) -> list[Obligation]:
    """The member voted (approve, reject or object) on the proposal: its vote obligation is fulfilled."""
    params = {"d_proposal": proposal_id, "d_member": member_id}
    return await _discharge(session, _DISCHARGE_VOTE, params, DischargeKind.FULFILLED)


async def discharge_for_proposal(session: AsyncSession, proposal_id: str, reason: str) -> list[Obligation]:
    """The proposal no longer takes votes (`reason`: merged, rejected, objected, expired, superseded,
    withdrawn, …): every obligation still open on it is discharged (as timed_out when it expired, as
    escalated when it went to a person, otherwise as superseded). Safe to call more than
    once and from racing transactions: each obligation is discharged, and its event recorded, once."""
    return await discharge_for_proposals(session, [proposal_id], reason)


async def discharge_for_proposals(
    session: AsyncSession, proposal_ids: Sequence[str], reason: str
) -> list[Obligation]:
    """`discharge_for_proposal` for proposals that ended alike (a merge and the rivals it superseded) in
    one statement."""
    kind = _BY_REASON.get(reason, DischargeKind.SUPERSEDED)
    if len(proposal_ids) == 1:
        return await _discharge(session, _DISCHARGE_ONE, {"d_proposal": proposal_ids[0]}, kind)
    return await _discharge(session, _DISCHARGE_MANY, {"d_proposals": list(proposal_ids)}, kind)


# How a proposal's end discharges what was owed on it; any other end (merged, rejected, withdrawn …) made
# the vote moot: superseded.
_BY_REASON = {"expired": DischargeKind.TIMED_OUT, "escalated": DischargeKind.ESCALATED}


async def pending(
    session: AsyncSession, resource_type: str, resource_id: str, *, member_id: str | None = None
) -> list[Obligation]:
    """Open obligations of the resource (of one member when given), oldest first."""
    stmt = select(PendingObligation).where(
        PendingObligation.resource_type == resource_type,
        PendingObligation.resource_id == resource_id,
        PendingObligation.discharged_at.is_(None),
    )
    if member_id is not None:
        stmt = stmt.where(PendingObligation.member_id == member_id)
    rows = await session.scalars(stmt.order_by(PendingObligation.created_at, PendingObligation.id))
    return [of(r) for r in rows.all()]
