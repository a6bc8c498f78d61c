"""Collaboration records on the sections of a topic or a document: intents, constraints and salience.

One implementation serves both resources, the way the consensus engine does: the resource plugs in
through `Target` (its type and id, its row lock, its Markdown) and a `Vocabulary` (its event names and
error codes, which each spec fixes). The area decides who may write (a topic's participants, a document's
members with a writing role) before calling in; the caller's Context names the agent.

Every write locks the resource row first, as the engine does. A salience score is an upsert on the
(resource, section, agent) unique key with ON CONFLICT DO NOTHING, so two first scores by one agent at once
leave one row on either database, whether or not the resource lock already serialised them.

An intent's lifecycle (proposed → accepted | objected | superseded) is domain/consensus/intents.py's; a
constraint is active until its author withdraws it, and is kept, withdrawn, with who and when.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any, Protocol, TypeVar

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import intent_events, intents, record_events, sections
from domain.consensus.intents import IntentStatus, Objection
from domain.consensus.models import SectionConstraint, SectionIntent, SectionSalience
from domain.kernel import audit, events, sqlutil
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest, Conflict, Forbidden, NotFound
from domain.kernel.ids import canonical_id, new_id
from domain.kernel.settings import get_settings
from domain.kernel.sqlutil import for_update
from domain.kernel.vocabulary import SpeltOut

SCORE_MIN, SCORE_MAX = 0, 10
CONSTRAINT_WITHDRAWN_EVENT = "pact.constraint.withdrawn"


class ConstraintStatus(StrEnum):
    """Whether a constraint still binds the section."""

    ACTIVE = "active"
    WITHDRAWN = "withdrawn"  # by its author; kept, with who and when


class ConstraintType(StrEnum):
    """How binding a constraint is."""

    MUST = "must"
    MUST_NOT = "must_not"
    SHOULD = "should"
    SHOULD_NOT = "should_not"
    PREFER = "prefer"


ConstraintTypeField = Annotated[ConstraintType, SpeltOut(ConstraintType)]


class Scope(Protocol):
    """The resource a record belongs to."""

    @property
    def resource_type(self) -> str: ...

    @property
    def resource_id(self) -> str: ...


class Target(Scope, Protocol):
    """A resource records are written to (the engine's `Resource` is one)."""

    async def lock(self, session: AsyncSession) -> None: ...

    async def read(self, session: AsyncSession) -> tuple[str, int]:
        """The current Markdown and version."""
        ...


@dataclass(frozen=True)
class Vocabulary:
    """What a resource's spec calls things: event types, the missing-section error code, and the event
    field that carries a constraint's kind (a topic's `category`, a document's `type`)."""

    intent_declared: str
    constraint_published: str
    salience_set: str
    section_not_found: str
    constraint_kind_field: str


# ---- results ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Intent:
    id: str
    resource_type: str
    resource_id: str
    section_id: str
    agent_id: str
    agent_name: str
    goal: str
    category: str
    created_at: datetime
    status: IntentStatus
    expires_at: datetime | None  # the end of its window for objections (None: declared before there was one)
    resolved_at: datetime | None  # when it was accepted, objected to or superseded
    objections: tuple[Objection, ...]


@dataclass(frozen=True)
class Constraint:
    id: str
    resource_type: str
    resource_id: str
    section_id: str
    agent_id: str
    agent_name: str
    boundary: str
    kind: str
    created_at: datetime
    status: ConstraintStatus
    withdrawn_at: datetime | None
    withdrawn_by: str | None  # the agent's id
    withdrawn_by_name: str | None


@dataclass(frozen=True)
class Intents:
    resource_type: str
    resource_id: str
    items: list[Intent]


@dataclass(frozen=True)
class Constraints:
    resource_type: str
    resource_id: str
    items: list[Constraint]


@dataclass(frozen=True)
class Score:
    """An agent's salience score of a section, as just set (previous: the score it replaced, if any)."""

    id: str
    resource_type: str
    resource_id: str
    section_id: str
    agent_id: str
    agent_name: str
    score: int
    previous: int | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class AgentScore:
    agent_id: str
    agent_name: str
    section_id: str
    score: int


@dataclass(frozen=True)
class SectionSalienceSummary:
    """The scores of one section. title is None and stale True for a section the resource no longer has
    (renamed or removed since it was scored)."""

    section_id: str
    title: str | None
    stale: bool
    scores: list[AgentScore]
    average: float | None


@dataclass(frozen=True)
class SalienceMap:
    resource_type: str
    resource_id: str
    sections: list[SectionSalienceSummary]


# ---- writes ----------------------------------------------------------------------------------------


Record = TypeVar("Record", SectionIntent, SectionConstraint)


async def _locked_row(
    session: AsyncSession, model: type[Record], target: Target, record_id: str
) -> Record | None:
    """The resource's intent or constraint of that id, locked for update; None for an unknown id."""
    key = canonical_id(record_id)
    if not key:
        return None
    found: Record | None = await session.scalar(
        for_update(
            select(model).where(
                model.id == key,
                model.resource_type == target.resource_type,
                model.resource_id == target.resource_id,
            )
        )
    )
    return found


async def _section(session: AsyncSession, target: Target, vocabulary: Vocabulary, section_id: str) -> None:
    """Lock the resource, then 404 unless the section exists in its current Markdown."""
    await target.lock(session)
    markdown, _version = await target.read(session)
    if sections.find(markdown, section_id) is None:
        raise NotFound(
            f"section {section_id} does not exist on this {target.resource_type}; re-read the sections",
            code=vocabulary.section_not_found,
            field="sectionId",
        )


async def _record(
    session: AsyncSession,
    ctx: Context,
    target: Target,
    event: str,
    op: str,
    entity: tuple[str, str],
    *,
    section_id: str,
    data: dict[str, Any],
    before: dict[str, Any] | None = None,
    correlation_id: str | None = None,
) -> None:
    events.append(
        session,
        events.stream_of(target.resource_type, target.resource_id),
        event,
        ctx,
        section_id=section_id,
        data=data,
        correlation_id=correlation_id,
    )
    audit.record(session, ctx, op, entity[0], entity[1], before=before, after=data)


async def declare_intent(
    session: AsyncSession,
    ctx: Context,
    target: Target,
    vocabulary: Vocabulary,
    *,
    section_id: str,
    goal: str,
    category: str,
) -> Intent:
    """A new intent, proposed for `CONCORD_INTENT_TTL_SECONDS`; the author's proposed or objected intents on
    the section are superseded by it."""
    actor = ctx.require_actor()
    await _section(session, target, vocabulary, section_id)
    await intents.settle(session, target.resource_type, target.resource_id)
    now = utcnow()
    row = SectionIntent(
        id=new_id(),
        resource_type=target.resource_type,
        resource_id=target.resource_id,
        section_id=section_id,
        agent_id=actor.id,
        agent_name=actor.name,
        goal=goal,
        category=category,
        created_at=now,
        status=IntentStatus.PROPOSED.value,
        expires_at=now + timedelta(seconds=get_settings().intent_ttl_seconds),
    )
    session.add(row)
    await session.flush()
    intent = _intent(row, (), now)
    data = intent_events.declared(intent)
    events.append(
        session,
        events.stream_of(target.resource_type, target.resource_id),
        vocabulary.intent_declared,
        ctx,
        section_id=section_id,
        correlation_id=intent.id,
        data=data,
    )
    audit.record(session, ctx, "intent.declare", "intent", intent.id, after=data)
    await intents.supersede(session, ctx, target.resource_type, target.resource_id, row)
    return intent


async def object_to_intent(
    session: AsyncSession, ctx: Context, target: Target, intent_id: str, *, reason: str
) -> Intent:
    """The acting agent objects to another agent's intent while it is proposed (or already objected to):
    404 `intent_not_found`, 409 `own_intent` on one's own, `intent_closed` once it is accepted (its TTL ran
    out) or superseded, `already_objected` for a second objection by the same agent."""
    actor = ctx.require_actor()
    await target.lock(session)
    await intents.settle(session, target.resource_type, target.resource_id)
    row = await _locked_row(session, SectionIntent, target, intent_id)
    if row is None:
        raise NotFound(
            f"intent {intent_id} not found on this {target.resource_type}", code="intent_not_found"
        )
    if row.agent_id == actor.id:
        raise Conflict("an agent cannot object to its own intent", code="own_intent")
    now = utcnow()
    status = intents.effective_status(row, now)
    if status in (IntentStatus.ACCEPTED, IntentStatus.SUPERSEDED):
        raise Conflict(
            f"intent is {status}: objections are taken while it is proposed (within its TTL) or objected",
            code="intent_closed",
            intentStatus=status.value,
        )
    if not await intents.add_objection(session, row, actor.id, actor.name, reason, now):
        raise Conflict("this agent has already objected to this intent", code="already_objected")
    before = {"status": row.status}
    if status is IntentStatus.PROPOSED:
        row.status = IntentStatus.OBJECTED.value
        row.resolved_at = now
    await session.flush()
    found = await intents.objections_of(session, [row.id])
    intent = _intent(row, found.get(row.id, ()), now)
    data = intent_events.objected(intent, actor.id, actor.name, reason)
    events.append(
        session,
        events.stream_of(target.resource_type, target.resource_id),
        intents.OBJECTED_EVENT,
        ctx,
        section_id=intent.section_id,
        correlation_id=intent.id,
        data=data,
    )
    audit.record(
        session,
        ctx,
        "intent.object",
        "intent",
        intent.id,
        before=before,
        after={**data, "status": row.status},
    )
    return intent


async def publish_constraint(
    session: AsyncSession,
    ctx: Context,
    target: Target,
    vocabulary: Vocabulary,
    *,
    section_id: str,
    boundary: str,
    kind: str,
    constraint_id: str | None = None,
    correlation_id: str | None = None,
) -> Constraint:
    """`constraint_id` and `correlation_id`: an onboarding names its constraints before publishing them,
    and links their events to its own (PACT §4.4.5)."""
    actor = ctx.require_actor()
    await _section(session, target, vocabulary, section_id)
    row = SectionConstraint(
        id=constraint_id or new_id(),
        resource_type=target.resource_type,
        resource_id=target.resource_id,
        section_id=section_id,
        agent_id=actor.id,
        agent_name=actor.name,
        boundary=boundary,
        kind=kind,
        created_at=utcnow(),
        status=ConstraintStatus.ACTIVE.value,
    )
    session.add(row)
    await session.flush()
    constraint = _constraint(row)
    data = record_events.constraint_published(row, vocabulary.constraint_kind_field)
    await _record(
        session,
        ctx,
        target,
        vocabulary.constraint_published,
        "constraint.publish",
        ("constraint", constraint.id),
        section_id=section_id,
        data=data,
        correlation_id=correlation_id,
    )
    return constraint


async def withdraw_constraint(
    session: AsyncSession, ctx: Context, target: Target, vocabulary: Vocabulary, constraint_id: str
) -> Constraint:
    """The constraint's author withdraws it: it is no longer listed as active, and is kept as withdrawn
    with who and when. 404 `constraint_not_found`, 403 `not_author`, 409 `constraint_withdrawn`."""
    actor = ctx.require_actor()
    await target.lock(session)
    row = await _locked_row(session, SectionConstraint, target, constraint_id)
    if row is None:
        raise NotFound(
            f"constraint {constraint_id} not found on this {target.resource_type}",
            code="constraint_not_found",
        )
    if row.agent_id != actor.id:
        raise Forbidden("only the constraint's author may withdraw it", code="not_author")
    if row.status != ConstraintStatus.ACTIVE.value:
        raise Conflict(
            f"constraint was withdrawn at {iso(row.withdrawn_at)}",
            code="constraint_withdrawn",
            status=row.status,
        )
    row.status = ConstraintStatus.WITHDRAWN.value
    row.withdrawn_at = utcnow()
    row.withdrawn_by = actor.id
    row.withdrawn_by_name = actor.name
    await session.flush()
    constraint = _constraint(row)
    data = record_events.constraint_withdrawn(row, vocabulary.constraint_kind_field)
    events.append(
        session,
        events.stream_of(target.resource_type, target.resource_id),
        CONSTRAINT_WITHDRAWN_EVENT,
        ctx,
        section_id=constraint.section_id,
        correlation_id=constraint.id,
        data=data,
    )
    audit.record(
        session,
        ctx,
        "constraint.withdraw",
        "constraint",
        constraint.id,
        before={"status": ConstraintStatus.ACTIVE.value},
        after={**data, "status": constraint.status.value},
    )
    return constraint


async def set_salience(
    session: AsyncSession,
    ctx: Context,
    target: Target,
    vocabulary: Vocabulary,
    *,
    section_id: str,
    score: int,
) -> Score:
    """Set (insert or replace) the acting agent's score of a section; the first score's time is kept."""
    actor = ctx.require_actor()
    if isinstance(score, bool) or not SCORE_MIN <= score <= SCORE_MAX:
        raise BadRequest(f"score must be an integer from {SCORE_MIN} to {SCORE_MAX}", field="score")
    await _section(session, target, vocabulary, section_id)
    now = utcnow()
    key = (
        SectionSalience.resource_type == target.resource_type,
        SectionSalience.resource_id == target.resource_id,
        SectionSalience.section_id == section_id,
        SectionSalience.agent_id == actor.id,
    )
    inserted = await session.scalar(
        sqlutil.insert(session, SectionSalience)
        .values(
            id=new_id(),
            resource_type=target.resource_type,
            resource_id=target.resource_id,
            section_id=section_id,
            agent_id=actor.id,
            agent_name=actor.name,
            score=score,
            created_at=now,
            updated_at=now,
        )
        .on_conflict_do_nothing()
        .returning(SectionSalience.id)
    )
    row = await session.scalar(for_update(select(SectionSalience).where(*key)))
    if row is None:  # cannot happen: the row was inserted, or the conflicting one is committed
        raise RuntimeError("salience row vanished after its upsert")
    previous = None if inserted is not None else row.score
    row.score = score
    row.updated_at = now
    await session.flush()
    result = _score(row, previous)
    data = record_events.salience_set(row, previous)
    await _record(
        session,
        ctx,
        target,
        vocabulary.salience_set,
        "salience.set",
        ("salience", result.id),
        section_id=section_id,
        data=data,
        before=None if previous is None else {"score": previous},
    )
    return result


# ---- reads -----------------------------------------------------------------------------------------


async def list_intents(session: AsyncSession, scope: Scope, *, section_id: str | None = None) -> Intents:
    """The resource's intents, oldest first, each with its status as of now (intents.effective_status) and
    its objections."""
    stmt = select(SectionIntent).where(
        SectionIntent.resource_type == scope.resource_type, SectionIntent.resource_id == scope.resource_id
    )
    if section_id:
        stmt = stmt.where(SectionIntent.section_id == section_id)
    rows = (await session.scalars(stmt.order_by(SectionIntent.created_at, SectionIntent.id))).all()
    objected = [r.id for r in rows if r.status != IntentStatus.ACCEPTED.value]
    found = await intents.objections_of(session, objected) if objected else {}
    now = utcnow()
    return Intents(
        scope.resource_type, scope.resource_id, [_intent(r, found.get(r.id, ()), now) for r in rows]
    )


async def list_constraints(
    session: AsyncSession,
    scope: Scope,
    *,
    section_id: str | None = None,
    status: ConstraintStatus = ConstraintStatus.ACTIVE,
) -> Constraints:
    """The resource's constraints in `status` (active by default), oldest first."""
    stmt = select(SectionConstraint).where(
        SectionConstraint.resource_type == scope.resource_type,
        SectionConstraint.resource_id == scope.resource_id,
        SectionConstraint.status == status.value,
    )
    if section_id:
        stmt = stmt.where(SectionConstraint.section_id == section_id)
    rows = (await session.scalars(stmt.order_by(SectionConstraint.created_at, SectionConstraint.id))).all()
    return Constraints(scope.resource_type, scope.resource_id, [_constraint(r) for r in rows])


async def salience_map(session: AsyncSession, scope: Scope, markdown: str) -> SalienceMap:
    """Every section of `markdown` in document order with its scores (in the order agents first scored),
    then the scored sections it no longer has, marked stale."""
    rows = (
        await session.scalars(
            select(SectionSalience)
            .where(
                SectionSalience.resource_type == scope.resource_type,
                SectionSalience.resource_id == scope.resource_id,
            )
            .order_by(SectionSalience.created_at, SectionSalience.id)
        )
    ).all()
    by_section: dict[str, list[AgentScore]] = defaultdict(list)
    for r in rows:
        by_section[r.section_id].append(AgentScore(r.agent_id, r.agent_name, r.section_id, r.score))
    out = [
        _summary(sec.id, sec.title, by_section.pop(sec.id, []), stale=False)
        for sec in sections.parse(markdown)
    ]
    out.extend(_summary(sid, None, scores, stale=True) for sid, scores in by_section.items())
    return SalienceMap(scope.resource_type, scope.resource_id, out)


def _summary(
    section_id: str, title: str | None, scores: list[AgentScore], *, stale: bool
) -> SectionSalienceSummary:
    average = round(sum(s.score for s in scores) / len(scores), 2) if scores else None
    return SectionSalienceSummary(section_id, title, stale, scores, average)


def _intent(row: SectionIntent, objections: Iterable[Objection], now: datetime) -> Intent:
    status = intents.effective_status(row, now)
    resolved_at = row.expires_at if status != row.status else row.resolved_at  # accepted, not yet written
    return Intent(
        id=row.id,
        resource_type=row.resource_type,
        resource_id=row.resource_id,
        section_id=row.section_id,
        agent_id=row.agent_id,
        agent_name=row.agent_name,
        goal=row.goal,
        category=row.category,
        created_at=row.created_at,
        status=status,
        expires_at=row.expires_at,
        resolved_at=resolved_at,
        objections=tuple(objections),
    )


def _constraint(row: SectionConstraint) -> Constraint:
    return Constraint(
        id=row.id,
        resource_type=row.resource_type,
        resource_id=row.resource_id,
        section_id=row.section_id,
        agent_id=row.agent_id,
        agent_name=row.agent_name,
        boundary=row.boundary,
        kind=row.kind,
        created_at=row.created_at,
        status=ConstraintStatus(row.status),
        withdrawn_at=row.withdrawn_at,
        withdrawn_by=row.withdrawn_by,
        withdrawn_by_name=row.withdrawn_by_name,
    )


def _score(row: SectionSalience, previous: int | None) -> Score:
    return Score(
        id=row.id,
        resource_type=row.resource_type,
        resource_id=row.resource_id,
        section_id=row.section_id,
        agent_id=row.agent_id,
        agent_name=row.agent_name,
        score=row.score,
        previous=previous,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )
