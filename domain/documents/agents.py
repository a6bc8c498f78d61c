"""Agents on a document (spec "Agent lifecycle", "Content", escalation, events): join, leave, the list of
agents, the content and section tree they work on, escalation to a human, and the document's events.
Intents, constraints and salience are in records.py, section locks in locks.py.

A service key joins a document once and then acts as that agent on it (DESIGN.md "Keys and people").
Every write locks the document row first, which orders concurrent writers on one document on
PostgreSQL (SQLite writers are serialised anyway), and records an event and an audit entry."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import escalations, sections, sessions
from domain.consensus.locks import UnlockReason
from domain.consensus.models import Proposal
from domain.documents import agent_events, library, locks
from domain.documents.access import Caller
from domain.documents.membership import (
    CAPABILITIES,
    ROLE_CAPABILITIES,
    agent_ctx,
    member,
    membership,
    record,
    section,
)
from domain.documents.models import Document, DocumentAgent, ServiceKey
from domain.kernel import event_views, events, keys
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest, Conflict, Forbidden, NotFound
from domain.kernel.ids import new_id

RESOURCE = "document"

# ---- membership ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class JoinRequest:
    """What an agent asks for when it joins a document: its name, its document role (editor when None), the
    capabilities it takes (all the role allows when None), the invite token it joins with, its contact."""

    agent_name: str
    role: str | None = None
    capabilities: Sequence[str] | None = None
    invite_token: str | None = None
    contact: Mapping[str, str] | None = None


async def join(session: AsyncSession, caller: Caller, document_id: str, asked: JoinRequest) -> DocumentAgent:
    """The caller's key joins the document as a new agent (the row a join answers)."""
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await admit(session, caller, doc, asked)
    data = agent_events.joined(agent)
    await record(session, agent_ctx(caller, agent), doc, "pact.agent.joined", "document.join", data=data)
    return agent


async def admit(
    session: AsyncSession,
    caller: Caller,
    doc: Document,
    asked: JoinRequest,
    *,
    pact_role: sessions.PactRole | None = None,
    contact: Mapping[str, str] | None = None,
) -> DocumentAgent:
    """The membership of a join (the document locked by the caller), checked and added, with its session
    profile (the key's principal, the PACT role and contact declared; seen now); no event: the join records
    `pact.agent.joined`, an onboarding `pact.fabric.onboarded` instead (PACT §4.4.5)."""
    name = " ".join(asked.agent_name.split())
    if not name or not any(ch.isalnum() for ch in name):
        raise BadRequest("agentName must contain a letter or digit", field="agentName")
    if await membership(session, caller, doc) is not None:
        raise Conflict("this key has already joined the document; leave first", code="agent.already_joined")
    taken = await session.scalar(
        select(DocumentAgent.id).where(
            DocumentAgent.document_id == doc.id,
            DocumentAgent.status == "active",
            DocumentAgent.agent_name == name,
        )
    )
    if taken:
        raise Conflict(f"an agent named {name!r} is already on this document", code="agent.already_joined")
    role = asked.role or "editor"
    agent = DocumentAgent(
        id=new_id(),
        document_id=doc.id,
        key_id=caller.key_id,
        agent_name=name,
        role=role,
        capabilities=_capabilities(role, asked.capabilities),
        invite_token_hash=_invite_hash(asked.invite_token),
        status="active",
        joined_at=utcnow(),
    )
    session.add(agent)
    await session.flush()
    await sessions.enrol(
        session,
        sessions.Fabric(RESOURCE, doc.id, ()),
        agent.id,
        principal=caller.principal,
        pact_role=pact_role,
        contact=contact if contact is not None else asked.contact,
    )
    return agent


def _invite_hash(token: str | None) -> str | None:
    """Only the SHA-256 of an invite token is stored, as of every other secret."""
    return keys.hash_key(token) if token else None


def _capabilities(role: str, asked: Sequence[str] | None) -> list[str]:
    """The role's capabilities, or the ones asked for if the role grants them all (400 otherwise: the
    answer lists exactly what the agent may do, so asking for more is refused rather than dropped)."""
    allowed = ROLE_CAPABILITIES.get(role, ())
    if asked is None:
        return list(allowed)
    wanted = list(dict.fromkeys(c.strip() for c in asked))
    unknown = [c for c in wanted if c not in CAPABILITIES]
    if unknown:
        raise BadRequest(
            f"capabilities: unknown {', '.join(map(repr, unknown))}; known: {', '.join(CAPABILITIES)}",
            field="capabilities",
        )
    refused = [c for c in wanted if c not in allowed]
    if refused:
        raise BadRequest(
            f"capabilities: role {role} may not {' or '.join(refused)}; it may have "
            f"{', '.join(allowed) or 'none'} (omit capabilities to get the role's)",
            field="capabilities",
            role=role,
            allowed=list(allowed),
        )
    return [c for c in CAPABILITIES if c in wanted]


@dataclass(frozen=True)
class Departure:
    """An agent's membership ended: by leaving, or removed by the organisation (`removed_by`, `reason`)."""

    agent_id: str
    left_at: datetime
    locks_released: int
    key_revoked: bool  # the key an invite minted for it, revoked with it
    removed_by: str | None = None
    reason: str | None = None


async def leave(session: AsyncSession, caller: Caller, document_id: str, agent_id: str | None) -> Departure:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    if agent_id and agent_id != agent.id:
        raise Forbidden("an agent can only remove itself", code="auth.forbidden")
    ctx = agent_ctx(caller, agent)
    departed = await _depart(session, ctx, doc, agent)
    await record(
        session, ctx, doc, "pact.agent.left", "document.leave", data=agent_events.left(agent, departed)
    )
    return departed


async def remove(
    session: AsyncSession, caller: Caller, document_id: str, agent_id: str, *, reason: str | None
) -> Departure:
    """The organisation removes an agent from its document (PACT §9.2 "remove an agent": a forced leave):
    its locks are released and a key an invite minted for it is revoked, as when it leaves; the event and the
    audit entry name who removed it (the caller: a person or the organisation's key) and why."""
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await session.scalar(
        select(DocumentAgent).where(
            DocumentAgent.id == agent_id.strip(),
            DocumentAgent.document_id == doc.id,
            DocumentAgent.status == "active",
        )
    )
    if agent is None:
        raise NotFound(
            f"no active agent {agent_id} on this document", code="agent.not_found", field="agentId"
        )
    departed = replace(await _depart(session, caller.ctx, doc, agent), removed_by=caller.name, reason=reason)
    data = agent_events.left(agent, departed)
    await record(session, caller.ctx, doc, "pact.agent.left", "document.agent.remove", data=data)
    return departed


async def _depart(session: AsyncSession, ctx: Context, doc: Document, agent: DocumentAgent) -> Departure:
    """An agent's membership ends (by leaving or by removal): its locks released, an invite's key retired."""
    released = await locks.release_all(session, ctx, doc, agent.id, UnlockReason.LEFT)
    agent.status = "left"
    agent.left_at = left_at = utcnow()
    key_revoked = await _retire_invite_key(session, agent.key_id, doc, left_at)
    return Departure(agent.id, left_at, released, key_revoked)


async def _retire_invite_key(session: AsyncSession, key_id: str, doc: Document, now: datetime) -> bool:
    """A key an invite minted for this document exists only to be its agent there: when that agent's
    membership ends, the key is revoked, so coming back takes a new invite (the owner's say over who joins
    holds)."""
    key = await session.get(ServiceKey, key_id)
    if key is None or key.document_id != doc.id or key.revoked_at is not None:
        return False
    key.revoked_at = now
    return True


async def agents(session: AsyncSession, caller: Caller, document_id: str) -> list[DocumentAgent]:
    """The document's active agents in the order they joined."""
    doc = await library.get(session, caller, document_id)
    rows = (
        await session.scalars(
            select(DocumentAgent)
            .where(DocumentAgent.document_id == doc.id, DocumentAgent.status == "active")
            .order_by(DocumentAgent.joined_at)
        )
    ).all()
    return list(rows)


# ---- content --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Content:
    """A document's Markdown, or one section's (`section_id`), with the document's version."""

    document_id: str
    content: str
    version: int
    updated_at: datetime
    section_id: str | None = None


async def content(session: AsyncSession, caller: Caller, document_id: str) -> Content:
    doc = await library.get(session, caller, document_id)
    return Content(doc.id, library.require_ready(doc), doc.version, doc.updated_at)


SECTIONS_PAGE = 1000  # sections a tree read answers at most (the REST read's default and largest page)


@dataclass(frozen=True)
class SectionTree:
    """A document's sections: the whole tree (`sections` the top-level ones, each with its `children`), or
    with `page` a page of them, flat in document order (a node's parent may be on an earlier page), with
    the document's `total` and the `next_cursor` (None on the last page)."""

    document_id: str
    sections: list[sections.Section]
    page: bool = False
    total: int | None = None
    next_cursor: str | None = None


async def section_tree(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    *,
    limit: int | None = None,
    cursor: str | None = None,
) -> SectionTree:
    """The section tree; with `limit` (or `cursor`) a page of it. A document with no more sections than
    the limit answers its whole tree as it always did; a larger one answers `limit` sections in document
    order from the one after `cursor` (a section id: the `next_cursor` of the page before), with `total`
    and `next_cursor` (None on the last page)."""
    doc = await library.get(session, caller, document_id)
    content = await library.ready_content(doc)
    found = sections.parse(content)
    if cursor is None and (limit is None or len(found) <= limit):
        return SectionTree(doc.id, sections.top_level(content))
    start = 0
    if cursor is not None:
        at = next((n for n, s in enumerate(found) if s.id == cursor), None)
        if at is None:
            raise Conflict(
                f"cursor: section {cursor} is no longer in the document (it changed); read the sections "
                "again from the first page",
                code="sections.cursor_stale",
                field="cursor",
            )
        start = at + 1
    size = limit or SECTIONS_PAGE
    page = found[start : start + size]
    more = start + size < len(found)
    return SectionTree(doc.id, page, True, len(found), page[-1].id if more and page else None)


def section_markdown(markdown: str, section_id: str) -> str:
    """One section as Markdown: its heading line (none for the root preamble) and its own body."""
    found = sections.find(markdown, section_id)
    if found is None:
        raise NotFound(f"section {section_id} not found; re-read the sections", code="section.not_found")
    body = sections.body(markdown, found)
    if found.heading_level == 0:
        return body + "\n"
    return (
        f"{'#' * found.heading_level} {found.title}\n\n{body}\n"
        if body
        else f"{'#' * found.heading_level} {found.title}\n"
    )


async def section_content(
    session: AsyncSession, caller: Caller, document_id: str, section_id: str
) -> Content:
    """The Markdown of one section of the caller's document, with the document's version."""
    doc = await library.get(session, caller, document_id)
    markdown = section_markdown(await library.ready_content(doc), section_id)
    return Content(doc.id, markdown, doc.version, doc.updated_at, section_id)


# ---- escalation ----------------------------------------------------------------------------------


async def escalate(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    *,
    question: str | None,
    message: str | None = None,
    section_id: str | None = None,
    proposal_id: str | None = None,
    priority: str | None = None,
) -> escalations.Raised:
    """The agent's question for the human reviewers (`question` or `message`: see
    escalations.question_of), about a section or a proposal of the document if it names one."""
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    text = escalations.question_of(question, message)
    if section_id:
        await section(doc, section_id)
    if proposal_id:
        found = await session.scalar(
            select(Proposal.id).where(
                Proposal.id == proposal_id,
                Proposal.resource_type == "document",
                Proposal.resource_id == doc.id,
            )
        )
        if found is None:
            raise NotFound(f"proposal {proposal_id} not found", code="proposal.not_found")
    return await escalations.create(
        session,
        agent_ctx(caller, agent),
        resource_type="document",
        resource_id=doc.id,
        message=text,
        section_id=section_id,
        proposal_id=proposal_id,
        priority=priority or "medium",
    )


# ---- events and poll -------------------------------------------------------------------------------


async def event_stream(session: AsyncSession, caller: Caller, document_id: str) -> str:
    """The name of the document's event stream, for its live events: refused as its event list is."""
    doc = await library.get(session, caller, document_id)
    return library.stream(doc.id)


async def event_page(
    session: AsyncSession, caller: Caller, document_id: str, *, after: str | None, limit: int
) -> events.Page:
    """The document's events after the cursor `after` (`n` or `evt_n`)."""
    doc = await library.get(session, caller, document_id)
    start = events.parse_cursor(after, field="after")
    return await events.page(session, library.stream(doc.id), after=start, limit=limit)


async def poll(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    *,
    since: str | None,
    section_id: str | None,
    limit: int,
) -> event_views.PollPage:
    doc = await library.get(session, caller, document_id)
    return await event_views.poll(
        session, library.stream(doc.id), since=since, section_id=section_id, limit=limit
    )


async def transcript(
    session: AsyncSession, caller: Caller, document_id: str, *, since: str | None, limit: int
) -> event_views.Transcript:
    """The document's event log since a cursor: read as its event list is (tap:read, the organisation's)."""
    doc = await library.get(session, caller, document_id)
    return await event_views.transcript(session, library.stream(doc.id), since=since, limit=limit)
