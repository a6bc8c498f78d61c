"""The consensus engine's statements where the two dialects differ: a vote with its counter (and on PostgreSQL
the discharge of the voter's obligation), and the settle
of a section when a proposal merges. Built once, executed with parameters; the rules that call them are in
domain/consensus/engine.py."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Table, bindparam, case, exists, insert, inspect, or_, select, true, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import make_transient_to_detached
from sqlalchemy.orm.attributes import set_committed_value

from domain.consensus import obligations
from domain.consensus.models import Proposal, ProposalVote, VoteKind
from domain.consensus.session_models import PendingObligation
from domain.kernel.db import table_of
from domain.kernel.sqlutil import DriverStatement, on_postgresql

_VOTES = table_of(ProposalVote)
_PROPOSALS = table_of(Proposal)
_OBLIGATIONS = table_of(PendingObligation)
_COUNTERS: dict[str, str] = {kind: f"{kind}_count" for kind in VoteKind}


async def insert_proposal(session: AsyncSession, proposal: Proposal) -> None:
    """A new proposal's row written by one INSERT of its attributes (not the unit of work's flush), and the
    instance made persistent in the session as though it had been read back: later reads in the unit of work
    find it in the identity map, and changes to it are flushed as updates."""
    values = {attr.key: getattr(proposal, attr.key) for attr in _PROPOSAL_ATTRIBUTES}
    row = {_PROPOSAL_COLUMNS[key]: value for key, value in values.items()}
    await session.execute(insert(_PROPOSALS), row)
    make_transient_to_detached(proposal)
    session.add(proposal)
    for key, value in values.items():  # every column loaded, those never set (None) too
        set_committed_value(proposal, key, value)


_PROPOSAL_ATTRIBUTES = tuple(inspect(Proposal).column_attrs)
_PROPOSAL_COLUMNS = {attr.key: attr.columns[0].name for attr in _PROPOSAL_ATTRIBUTES}

# SQLite: a vote is one statement, refused by the (proposal, agent) unique key, and its counter moves with the
# commit's flush.
_ADD_VOTE_SQLITE = sqlite.insert(_VOTES).on_conflict_do_nothing().returning(_VOTES.c.id)


def _vote_and_count(kind: str) -> Any:
    """PostgreSQL: the vote's INSERT, its counter's increment and the discharge of the voter's vote
    obligation on the proposal (domain/consensus/obligations.py) in one statement; the counter moves and the
    obligation ends only if the vote went in (the (proposal, agent) unique key refuses a second one, even a
    racing one). One row when the vote went in: the new count, and the discharged obligation's columns
    (NULL when none was open); no row when it was refused."""
    added = (
        postgresql.insert(_VOTES)
        .values(
            proposal_id=bindparam("v_proposal"),
            agent_id=bindparam("v_agent"),
            agent_name=bindparam("v_name"),
            kind=kind,
            reason=bindparam("v_reason"),
            created_at=bindparam("v_at"),
        )
        .on_conflict_do_nothing()
        .returning(_VOTES.c.id)
        .cte("added")
    )
    counter = _PROPOSALS.c[_COUNTERS[kind]]
    counted = (
        update(_PROPOSALS)
        .where(_PROPOSALS.c.id == bindparam("v_proposal"), exists(select(added.c.id)))
        .values({counter: counter + 1})
        .returning(counter.label("count"))
        .cte("counted")
    )
    discharged = (
        update(_OBLIGATIONS)
        .where(
            _OBLIGATIONS.c.proposal_id == bindparam("v_proposal"),
            _OBLIGATIONS.c.member_id == bindparam("v_agent"),
            _OBLIGATIONS.c.kind == obligations.ObligationKind.VOTE.value,
            _OBLIGATIONS.c.discharged_at.is_(None),
            exists(select(added.c.id)),
        )
        .values(
            discharged_at=bindparam("v_at"),
            discharge_kind=obligations.DischargeKind.FULFILLED.value,
            discharge_event_ref=_OBLIGATIONS.c.proposal_id,
        )
        .returning(*obligations.RETURNED)
        .cte("discharged")
    )
    return select(counted.c.count, *(discharged.c[c.name] for c in obligations.RETURNED)).select_from(
        counted.outerjoin(discharged, true())
    )


_VOTE_AND_COUNT: dict[str, DriverStatement] = {
    kind: DriverStatement.of(_vote_and_count(kind)) for kind in VoteKind
}


@dataclass(frozen=True)
class Added:
    """A vote that went in, with the rows of the obligations its statement discharged (`obligations.RETURNED`
    columns; None: the statement did not discharge them, the caller does)."""

    discharged: Sequence[Any] | None
    at: datetime


async def add_vote(
    session: AsyncSession,
    proposal: Proposal,
    *,
    agent_id: str,
    agent_name: str,
    kind: str,
    reason: str | None,
    at: datetime,
) -> Added | None:
    """The agent's vote of `kind` on the proposal, and one more on the proposal's counter of that kind (the
    loaded row's too); None, with nothing written, when the agent has voted on it already. On PostgreSQL the
    same statement fulfils the voter's vote obligation (its event is recorded by the caller, after the vote's:
    `obligations.record_discharged`)."""
    column = _COUNTERS[kind]
    if on_postgresql(session):
        params = {"v_proposal": proposal.id, "v_agent": agent_id, "v_name": agent_name, "v_reason": reason}
        rows = await _VOTE_AND_COUNT[kind].all(session, {**params, "v_at": at})
        if not rows:
            return None
        set_committed_value(proposal, column, rows[0].count)  # the row has it already: nothing to flush
        return Added([row for row in rows if row.id is not None], at)
    row = {
        "proposal_id": proposal.id,
        "agent_id": agent_id,
        "agent_name": agent_name,
        "kind": kind,
        "reason": reason,
        "created_at": at,
    }
    if await session.scalar(_ADD_VOTE_SQLITE, row) is None:
        return None
    setattr(proposal, column, getattr(proposal, column) + 1)
    return Added(None, at)


# A merge settles its section in one statement: the merged proposal takes its accepted status and every
# rival still open on the section is superseded, pending or objected (an objected one waits for a person, who
# would otherwise decide on text the merge has replaced); the ids of the rivals come back.
_IS_MERGED = _PROPOSALS.c.id == bindparam("merged")
_SETTLE = (
    update(_PROPOSALS)
    .where(
        _PROPOSALS.c.resource_type == bindparam("p_resource_type"),
        _PROPOSALS.c.resource_id == bindparam("p_resource_id"),
        _PROPOSALS.c.section_id == bindparam("p_section_id"),
        # Equalities rather than IN: an IN of a tuple is rendered per execution (sqlutil.DriverStatement).
        or_(_IS_MERGED, _PROPOSALS.c.status == "pending", _PROPOSALS.c.status == "objected"),
    )
    .values(
        status=case((_IS_MERGED, bindparam("p_accepted")), else_="superseded"),
        resolved_at=bindparam("p_now"),
    )
    .returning(_PROPOSALS.c.id)
)


@cache
def _settle_writing(table: Table) -> DriverStatement:
    """PostgreSQL: the settle with, in the same statement, the resource's content, version and updated_at
    written by one data-modifying CTE and the obligations still open on the settled proposals discharged
    (superseded) by another: one row per settled proposal and obligation it discharged (the obligation's
    columns NULL for a proposal with none). Two round trips a merge fewer."""
    written = (
        update(table)
        .where(table.c.id == bindparam("w_id"))
        .values(content=bindparam("w_content"), version=bindparam("w_version"), updated_at=bindparam("p_now"))
        .returning(table.c.id)
        .cte("written")
    )
    settled = _SETTLE.add_cte(written).cte("settled")
    discharged = (
        update(_OBLIGATIONS)
        .where(
            _OBLIGATIONS.c.proposal_id.in_(select(settled.c.id)),
            _OBLIGATIONS.c.discharged_at.is_(None),
        )
        .values(
            discharged_at=bindparam("p_now"),
            discharge_kind=obligations.DischargeKind.SUPERSEDED.value,
            discharge_event_ref=_OBLIGATIONS.c.proposal_id,
        )
        .returning(*obligations.RETURNED)
        .cte("discharged")
    )
    return DriverStatement.of(
        select(
            settled.c.id.label("settled"), *(discharged.c[c.name] for c in obligations.RETURNED)
        ).select_from(settled.outerjoin(discharged, discharged.c.proposal_id == settled.c.id))
    )


@dataclass(frozen=True)
class Settled:
    """The proposals a merge settled (the merged one among them), and the rows of the obligations its
    statement discharged as superseded (`obligations.RETURNED` columns; None: the caller discharges them)."""

    ids: list[str]
    discharged: Sequence[Any] | None


async def settle_section(
    session: AsyncSession,
    proposal: Proposal,
    accepted_status: str,
    row: Any,
    *,
    content: str,
    version: int,
    at: datetime,
) -> Settled:
    """Merge the proposal on its section: it takes `accepted_status`, every rival still open there is
    superseded, and the resource's `row` (locked by the caller) takes the new content and version; the ids
    of the proposals settled, the merged one among them (and on PostgreSQL what was owed on them, ended)."""
    written = {"content": content, "version": version, "updated_at": at}
    params = {
        "p_resource_type": proposal.resource_type,
        "p_resource_id": proposal.resource_id,
        "p_section_id": proposal.section_id,
        "merged": proposal.id,
        "p_accepted": accepted_status,
        "p_now": at,
    }
    if on_postgresql(session):
        # The resource's new content and the discharges go in the same statement.
        params.update({"w_id": row.id, "w_content": content, "w_version": version})
        rows = await _settle_writing(row.__table__).all(session, params)
        for name, value in written.items():
            set_committed_value(row, name, value)
        ids = list(dict.fromkeys(r.settled for r in rows))
        return Settled(ids, [r for r in rows if r.id is not None])
    for name, value in written.items():
        setattr(row, name, value)
    return Settled(list((await session.scalars(_SETTLE, params)).all()), None)
