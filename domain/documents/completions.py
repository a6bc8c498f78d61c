"""Done signals on a document (PACT v2.0.3 §7.1 `POST /done`, `GET /completions`) through the shared
completions (domain/consensus/completions.py): any joined agent signals, whatever its role (an observer may
say it abstains); any key of the organisation with tap:read lists them."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import completions, sessions
from domain.documents import library
from domain.documents import sessions as document_sessions
from domain.documents.access import Caller
from domain.documents.membership import agent_ctx, member
from domain.documents.models import DocumentAgent


async def done(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    *,
    status: completions.CompletionStatus,
    summary: str | None,
) -> completions.Signal:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    signal = await completions.signal(
        session,
        agent_ctx(caller, agent),
        agent,
        resource_type="document",
        resource_id=doc.id,
        status=status,
        summary=summary,
    )
    return await sessions.with_outcome(session, await document_sessions.fabric_of(session, doc), signal)


async def completions_of(session: AsyncSession, caller: Caller, document_id: str) -> completions.Completions:
    """Every done signal on the document, oldest first, of agents still joined or gone (an agent that left
    and joined again is a new agent, with a completion of its own)."""
    doc = await library.get(session, caller, document_id)
    rows = (
        await session.scalars(
            select(DocumentAgent)
            .where(DocumentAgent.document_id == doc.id, DocumentAgent.done_status.is_not(None))
            .order_by(DocumentAgent.done_at, DocumentAgent.id)
        )
    ).all()
    found = [
        completions.completion_of(a, agent_id=a.id, agent_name=a.agent_name, active=a.status == "active")
        for a in rows
    ]
    return completions.Completions("document", doc.id, [c for c in found if c is not None])
