"""A person answers on a resource's own PACT paths (PACT v2.0.3 §7.1 "PACT Live"): the answer to a question
an agent asked (`.../human-responses/{queryId}/respond`, `pact.human.responded`) and the resolution of an
escalation (`.../resolve`, `pact.human.resolved`, optionally deciding the proposal it names). Both are the
review desk's one answer (escalations.settle), so an escalation or question answered here is answered
there, and the other way round; only one answer is ever recorded (the row is locked, a second gets 409).

On a topic the person is a reviewer (staff key, role reviewer); on a document, a person of the document's
organisation (domain/documents/human.py custodian). The agent that asked never answers itself."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import escalations
from domain.consensus.escalations import EscalationKind
from domain.consensus.models import Escalation
from domain.documents import human as document_people
from domain.documents.access import Caller
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest, Conflict, Forbidden, NotFound
from domain.kernel.ids import canonical_id
from domain.review import escalations as review
from domain.topics import store as topics


@dataclass(frozen=True)
class Resolution:
    """An escalation just resolved: as the agents now read it, what became of the proposal it names, the
    resource's version after that, and the sequence number of `pact.human.resolved`."""

    escalation: escalations.View
    proposal_status: str | None
    resource_version: int | None
    event_sequence: int


async def _find(
    session: AsyncSession,
    resource_type: str,
    resource_id: str,
    escalation_id: str,
    kind: EscalationKind,
    asked_by: Collection[str],
) -> Escalation:
    """The escalation (or question) of this resource, locked; 404 for another resource's or another kind's."""
    noun = "question" if kind is EscalationKind.QUESTION else "escalation"
    missing = NotFound(
        f"{noun} {escalation_id!r} not found on this {resource_type}", code=f"{noun}_not_found"
    )
    try:
        esc = await review.locked(session, escalation_id)
    except NotFound:
        raise missing from None
    if (esc.resource_type, esc.resource_id) != (resource_type, resource_id):
        raise missing
    if esc.kind != kind:
        if kind is EscalationKind.ESCALATION:
            raise Conflict(
                f"{esc.id} is a question an agent asked: answer it with POST "
                f".../human-responses/{esc.id}/respond",
                code="is_a_question",
            )
        raise missing
    if esc.raised_by is not None and esc.raised_by in asked_by:
        raise Forbidden(f"the agent that raised {noun} {esc.id} cannot answer it", code="own_question")
    return esc


async def _respond(
    session: AsyncSession,
    ctx: Context,
    resource_type: str,
    resource_id: str,
    query_id: str,
    text: str,
    asked_by: Collection[str] = (),
) -> escalations.View:
    esc = await _find(session, resource_type, resource_id, query_id, EscalationKind.QUESTION, asked_by)
    done = await review.settle(session, ctx, esc, text=text, decision=None)
    return escalations.view(done.escalation)


async def respond_on_topic(
    session: AsyncSession, ctx: Context, topic_id: str, query_id: str, *, text: str
) -> escalations.View:
    """A reviewer's answer to a question asked on the topic."""
    topic = await topics.get(session, topic_id)
    return await _respond(session, ctx, "topic", topic.id, query_id, text)


async def respond_on_document(
    session: AsyncSession, caller: Caller, document_id: str, query_id: str, *, text: str
) -> escalations.View:
    """A person's answer to a question an agent asked on the document."""
    doc, ctx = await document_people.custodian(session, caller, document_id)
    mine = await document_people.agent_ids(session, caller, doc)
    return await _respond(session, ctx, "document", doc.id, query_id, text, mine)


@dataclass(frozen=True)
class ResolveRequest:
    escalation_id: str
    decision: str  # the person's binding decision, in words
    section_id: str | None = None
    is_override: bool = False
    resolved_proposal_ids: Sequence[str] = ()
    proposal_decision: review.Decision | None = None  # what becomes of the proposal it names


def _proposal_decision(esc: Escalation, asked: ResolveRequest) -> review.Decision | None:
    """What the resolution does to the escalation's proposal: `proposal_decision`, which needs a proposal;
    `resolved_proposal_ids` may name only that proposal (an escalation resolves the proposal it names), and
    naming it needs the decision."""
    listed = {canonical_id(p) or p for p in asked.resolved_proposal_ids}
    others = sorted(listed - {esc.proposal_id})
    if others:
        names = f"proposal {esc.proposal_id}" if esc.proposal_id else "no proposal"
        raise Conflict(
            f"escalation {esc.id} names {names}: a resolution decides only the proposal its escalation "
            f"names, not {', '.join(others)}",
            code="proposal_mismatch",
            field="resolvedProposalIds",
        )
    if listed and asked.proposal_decision is None:
        raise BadRequest(
            f"say what the resolution does to proposal {esc.proposal_id}: proposalDecision approve or reject",
            field="proposalDecision",
        )
    return asked.proposal_decision


async def _resolve(
    session: AsyncSession,
    ctx: Context,
    resource_type: str,
    resource_id: str,
    asked: ResolveRequest,
    asked_by: Collection[str] = (),
) -> Resolution:
    esc = await _find(
        session, resource_type, resource_id, asked.escalation_id, EscalationKind.ESCALATION, asked_by
    )
    if asked.section_id is not None and asked.section_id != esc.section_id:
        about = f"section {esc.section_id}" if esc.section_id else f"no section (the whole {resource_type})"
        raise Conflict(
            f"escalation {esc.id} is about {about}, not {asked.section_id}",
            code="section_mismatch",
            field="sectionId",
        )
    decision = _proposal_decision(esc, asked)
    done = await review.settle(
        session, ctx, esc, text=asked.decision, decision=decision, is_override=asked.is_override
    )
    return Resolution(
        escalation=escalations.view(done.escalation),
        proposal_status=done.proposal.status if done.proposal is not None else None,
        resource_version=done.version,
        event_sequence=done.event_sequence,
    )


async def resolve_on_topic(
    session: AsyncSession, ctx: Context, topic_id: str, asked: ResolveRequest
) -> Resolution:
    """A reviewer's resolution of an escalation raised on the topic."""
    topic = await topics.get(session, topic_id)
    return await _resolve(session, ctx, "topic", topic.id, asked)


async def resolve_on_document(
    session: AsyncSession, caller: Caller, document_id: str, asked: ResolveRequest
) -> Resolution:
    """A person's resolution of an escalation raised on the document."""
    doc, ctx = await document_people.custodian(session, caller, document_id)
    mine = await document_people.agent_ids(session, caller, doc)
    return await _resolve(session, ctx, "document", doc.id, asked, mine)
