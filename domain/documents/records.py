"""Intents, constraints and salience on a document's sections, through the shared records
(domain/consensus/records.py) with the document API's names (spec/document-api.md): members with a
writing role declare intents and publish constraints, every member scores salience, any key of the
organisation with tap:read reads them."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import records
from domain.documents import library
from domain.documents.access import Caller
from domain.documents.membership import agent_ctx, member, require_writer
from domain.documents.proposals import DocumentResource

VOCABULARY = records.Vocabulary(
    intent_declared="pact.intent.declared",
    constraint_published="pact.constraint.published",
    salience_set="pact.salience.set",
    section_not_found="section.not_found",
    constraint_kind_field="type",
)


async def declare_intent(
    session: AsyncSession, caller: Caller, document_id: str, *, section_id: str, goal: str, category: str
) -> records.Intent:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    require_writer(agent, "declare intents")
    return await records.declare_intent(
        session,
        agent_ctx(caller, agent),
        DocumentResource(doc),
        VOCABULARY,
        section_id=section_id,
        goal=goal,
        category=category,
    )


async def list_intents(
    session: AsyncSession, caller: Caller, document_id: str, section_id: str | None
) -> records.Intents:
    doc = await library.get(session, caller, document_id)
    return await records.list_intents(session, DocumentResource(doc), section_id=section_id)


async def publish_constraint(
    session: AsyncSession, caller: Caller, document_id: str, *, section_id: str, boundary: str, type_: str
) -> records.Constraint:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    require_writer(agent, "publish constraints")
    return await records.publish_constraint(
        session,
        agent_ctx(caller, agent),
        DocumentResource(doc),
        VOCABULARY,
        section_id=section_id,
        boundary=boundary,
        kind=type_,
    )


async def list_constraints(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    section_id: str | None,
    status: records.ConstraintStatus = records.ConstraintStatus.ACTIVE,
) -> records.Constraints:
    doc = await library.get(session, caller, document_id)
    return await records.list_constraints(
        session, DocumentResource(doc), section_id=section_id, status=status
    )


async def withdraw_constraint(
    session: AsyncSession, caller: Caller, document_id: str, constraint_id: str
) -> records.Constraint:
    """The agent that published a constraint withdraws it (the key acting as that agent on the document)."""
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    return await records.withdraw_constraint(
        session, agent_ctx(caller, agent), DocumentResource(doc, locked=True), VOCABULARY, constraint_id
    )


async def object_to_intent(
    session: AsyncSession, caller: Caller, document_id: str, intent_id: str, *, reason: str
) -> records.Intent:
    """An editor or reviewer objects to another agent's intent (observers read, they do not object)."""
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    require_writer(agent, "object to intents")
    return await records.object_to_intent(
        session, agent_ctx(caller, agent), DocumentResource(doc, locked=True), intent_id, reason=reason
    )


async def set_salience(
    session: AsyncSession, caller: Caller, document_id: str, *, section_id: str, score: int
) -> records.Score:
    """Observers may score too: salience says what concerns an agent, not what it may change."""
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    return await records.set_salience(
        session,
        agent_ctx(caller, agent),
        DocumentResource(doc),
        VOCABULARY,
        section_id=section_id,
        score=score,
    )


async def salience_map(session: AsyncSession, caller: Caller, document_id: str) -> records.SalienceMap:
    doc = await library.get(session, caller, document_id)
    # A document still converting has no sections yet (and no scores either).
    return await records.salience_map(session, DocumentResource(doc), doc.content or "")
