"""People on a document's PACT paths: an agent asks the document's people a question and waits on the
answer (PACT ask-human), agents read their questions and escalations with the answers, and the people who
may answer them here are found.

Who reads what: an agent (a key, through every membership it has had on the document) reads its own
questions and escalations; the document's owner (the key that uploaded it) and the people of its
organisation (signed in, `actorKind` Individual) read every agent's. Who answers: a person of the
document's organisation (never a service key: keys are agents and servers), and never the agent that
asked; reviewers also answer at the hub's review desk, where every document's questions are queued."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import escalations
from domain.consensus.escalations import EscalationKind, EscalationStatus
from domain.documents import library
from domain.documents.access import Caller
from domain.documents.membership import agent_ctx, member, section
from domain.documents.models import Document, DocumentAgent
from domain.kernel.context import Context
from domain.kernel.errors import Forbidden

PRIORITY = "medium"  # the document API's default escalation priority


async def ask(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    *,
    question: str,
    section_id: str | None,
    context: str | None,
    timeout_seconds: int | None,
) -> escalations.View:
    """The joined agent's question for the document's people, waiting until its timeout."""
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    if section_id:
        await section(doc, section_id)
    return await escalations.ask(
        session,
        agent_ctx(caller, agent),
        resource_type="document",
        resource_id=doc.id,
        question=question,
        section_id=section_id,
        context=context,
        timeout_seconds=timeout_seconds,
        priority=PRIORITY,
    )


async def agent_ids(session: AsyncSession, caller: Caller, doc: Document) -> list[str]:
    """Every agent id the caller's key has had on the document (a key that left and joined again is a new
    agent with the same questions behind it)."""
    rows = await session.scalars(
        select(DocumentAgent.id).where(
            DocumentAgent.document_id == doc.id, DocumentAgent.key_id == caller.key_id
        )
    )
    return list(rows.all())


def is_person(caller: Caller) -> bool:
    actor = caller.ctx.actor
    return actor is not None and actor.kind == "person"


async def listing(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    *,
    kind: EscalationKind,
    state: EscalationStatus | None,
    limit: int,
    offset: int,
) -> escalations.Listing:
    """The caller's own questions (or escalations) on the document, with their answers; the owner's key and
    the organisation's people read every agent's."""
    doc = await library.get(session, caller, document_id)
    everyone = doc.owner_key_id == caller.key_id or is_person(caller)
    return await escalations.listing(
        session,
        resource_type="document",
        resource_id=doc.id,
        kind=kind,
        raised_by=None if everyone else await agent_ids(session, caller, doc),
        state=state,
        limit=limit,
        offset=offset,
    )


async def custodian(session: AsyncSession, caller: Caller, document_id: str) -> tuple[Document, Context]:
    """The document, for a person of its organisation who answers its agents (403 for a service key)."""
    doc = await library.get(session, caller, document_id)
    if not is_person(caller):
        raise Forbidden(
            "a person answers here: sign in (POST /api/auth/login) and send the access token; a service "
            "key is an agent's (reviewers also answer at the hub's review desk)",
            code="person_required",
        )
    return doc, caller.ctx
