"""Who acts on a document: a service key joins a document once and then acts as that agent on it
(DESIGN.md "Keys and people"); its role decides whether it may write. Also the steps every agent
operation shares: finding the section it names, and recording its event and audit entry."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import sections
from domain.documents import library
from domain.documents.access import Caller
from domain.documents.models import Document, DocumentAgent
from domain.kernel import audit, events
from domain.kernel.context import Actor, Context
from domain.kernel.errors import Forbidden, NotFound


class DocumentRole(StrEnum):
    """An agent's role on a document (beside PACT's roles, which map onto these: sessions.DOCUMENT_ROLE)."""

    EDITOR = "editor"  # proposes and votes (the default)
    REVIEWER = "reviewer"  # votes
    OBSERVER = "observer"  # reads only


class Capability(StrEnum):
    """A consensus act an agent may take on a document."""

    PROPOSE = "propose"
    VOTE = "vote"


WRITER_ROLES = (DocumentRole.EDITOR.value, DocumentRole.REVIEWER.value)
# The consensus acts an agent may take on a document, and the most each role may have; a join may ask for
# fewer. Everything else a role may do (intents, constraints, locks, salience, escalation) follows from the
# role alone (docs/documents.md "Agents on a document").
CAPABILITIES = tuple(c.value for c in Capability)
ROLE_CAPABILITIES: dict[str, tuple[str, ...]] = {
    DocumentRole.EDITOR: CAPABILITIES,
    DocumentRole.REVIEWER: CAPABILITIES,
    DocumentRole.OBSERVER: (),
}


def capabilities(a: DocumentAgent) -> list[str]:
    """What the agent may do: what it joined with, within what its role allows (a row kept from before
    roles bounded capabilities may list more; it never grants more)."""
    allowed = ROLE_CAPABILITIES.get(a.role, ())
    return [c for c in CAPABILITIES if c in allowed and c in (a.capabilities or [])]


def agent_ctx(caller: Caller, agent: DocumentAgent) -> Context:
    """The caller's Context with the document agent as the actor (events and audit name the agent)."""
    key_hash = caller.ctx.actor.key_hash if caller.ctx.actor else ""
    return Context(
        actor=Actor(agent.id, agent.agent_name, key_hash, kind="agent"),
        request_id=caller.ctx.request_id,
        country=caller.ctx.country,
    )


async def membership(session: AsyncSession, caller: Caller, doc: Document) -> DocumentAgent | None:
    return await session.scalar(
        select(DocumentAgent).where(
            DocumentAgent.document_id == doc.id,
            DocumentAgent.key_id == caller.key_id,
            DocumentAgent.status == "active",
        )
    )


async def member(session: AsyncSession, caller: Caller, doc: Document) -> DocumentAgent:
    agent = await membership(session, caller, doc)
    if agent is None:
        raise Forbidden("join the document first (POST …/join)", code="agent.not_joined")
    return agent


def require_writer(agent: DocumentAgent, what: str) -> None:
    if agent.role not in WRITER_ROLES:
        raise Forbidden(f"observers cannot {what}", code="role.insufficient", role=agent.role)


async def section(doc: Document, section_id: str) -> sections.Section:
    """The named section of a converted document (409 while converting, 422 if it failed, else 404)."""
    content = await library.ready_content(doc)
    found = sections.find(content, section_id)
    if found is None:
        raise NotFound(f"section {section_id} not found; re-read the sections", code="section.not_found")
    return found


async def record(
    session: AsyncSession,
    ctx: Context,
    doc: Document,
    event: str,
    op: str,
    *,
    section_id: str | None = None,
    data: dict[str, Any] | None = None,
) -> None:
    """The document event and the audit entry of an agent operation."""
    events.append(session, library.stream(doc.id), event, ctx, section_id=section_id, data=data or {})
    audit.record(session, ctx, op, "document", doc.id, after=data)
