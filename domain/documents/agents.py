"""Agents on a document (spec "Agent lifecycle", "Content", coordination, locks, escalation, events).

A service key joins a document once and then acts as that agent on it (DESIGN.md "Keys and people").
Every write locks the document row first, which orders concurrent writers on one document on
PostgreSQL (SQLite writers are serialised anyway), and records an event and an audit entry."""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import escalations, sections
from domain.consensus.models import Proposal
from domain.documents import library
from domain.documents.access import Caller
from domain.documents.models import (
    Document,
    DocumentAgent,
    DocumentConstraint,
    DocumentIntent,
    DocumentSalience,
    SectionLock,
)
from domain.kernel import audit, events
from domain.kernel.clock import iso, new_id, utcnow
from domain.kernel.context import SYSTEM, Actor, Context
from domain.kernel.errors import BadRequest, Conflict, Forbidden, NotFound

WRITER_ROLES = ("editor", "reviewer")


def agent_view(a: DocumentAgent) -> dict[str, Any]:
    return {
        "agentId": a.id,
        "agentName": a.agent_name,
        "role": a.role,
        "capabilities": list(a.capabilities or []),
        "status": a.status,
        "isActive": a.status == "active",
        "joinedAt": iso(a.joined_at),
        "leftAt": iso(a.left_at),
    }


def agent_ctx(caller: Caller, agent: DocumentAgent) -> Context:
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


def _section(doc: Document, section_id: str) -> sections.Section:
    content = library.require_ready(doc)
    found = sections.find(content, section_id)
    if found is None:
        raise NotFound(f"section {section_id} not found; re-read the sections", code="section.not_found")
    return found


async def _record(
    session: AsyncSession,
    ctx: Context,
    doc: Document,
    event: str,
    op: str,
    *,
    section_id: str | None = None,
    data: dict[str, Any] | None = None,
    entity: tuple[str, str] | None = None,
    before: Any = None,
) -> None:
    await events.append(session, library.stream(doc.id), event, ctx, section_id=section_id, data=data or {})
    etype, eid = entity or ("document", doc.id)
    await audit.record(session, ctx, op, etype, eid, before=before, after=data)


# ---- membership ----------------------------------------------------------------------------------


async def join(
    session: AsyncSession, caller: Caller, document_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id, for_update=True)
    name = " ".join(body["agentName"].split())
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
    caps = list(dict.fromkeys(c.strip() for c in body.get("capabilities") or [] if c and c.strip()))
    agent = DocumentAgent(
        id=new_id(),
        document_id=doc.id,
        key_id=caller.key_id,
        agent_name=name,
        role=body.get("role") or "editor",
        capabilities=caps,
        invite_token=body.get("inviteToken"),
        status="active",
        joined_at=utcnow(),
    )
    session.add(agent)
    await session.flush()
    view = agent_view(agent)
    await _record(session, agent_ctx(caller, agent), doc, "pact.agent.joined", "document.join", data=view)
    return {**view, "documentId": doc.id, "registrationId": agent.id}


async def _release_locks(
    session: AsyncSession, ctx: Context, doc: Document, agent_id: str, reason: str
) -> int:
    locks = (
        await session.scalars(
            select(SectionLock).where(SectionLock.document_id == doc.id, SectionLock.agent_id == agent_id)
        )
    ).all()
    for lock in locks:
        await session.delete(lock)
        await _record(
            session,
            ctx,
            doc,
            "pact.section.unlocked",
            "section.unlock",
            section_id=lock.section_id,
            data={"sectionId": lock.section_id, "reason": reason},
        )
    return len(locks)


async def leave(
    session: AsyncSession, caller: Caller, document_id: str, agent_id: str | None
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    if agent_id and agent_id != agent.id:
        raise Forbidden("an agent can only remove itself", code="auth.forbidden")
    ctx = agent_ctx(caller, agent)
    released = await _release_locks(session, ctx, doc, agent.id, "left")
    agent.status = "left"
    agent.left_at = utcnow()
    await _record(
        session,
        ctx,
        doc,
        "pact.agent.left",
        "document.leave",
        data={**agent_view(agent), "locksReleased": released},
    )
    return {"success": True, "agentId": agent.id, "leftAt": iso(agent.left_at), "locksReleased": released}


async def agents(session: AsyncSession, caller: Caller, document_id: str) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id)
    rows = (
        await session.scalars(
            select(DocumentAgent)
            .where(DocumentAgent.document_id == doc.id, DocumentAgent.status == "active")
            .order_by(DocumentAgent.joined_at)
        )
    ).all()
    return {"agents": [agent_view(a) for a in rows]}


# ---- content --------------------------------------------------------------------------------------


async def content(session: AsyncSession, caller: Caller, document_id: str) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id)
    return {
        "documentId": doc.id,
        "format": "markdown",
        "content": library.require_ready(doc),
        "version": doc.version,
        "updatedAt": iso(doc.updated_at),
    }


async def section_tree(session: AsyncSession, caller: Caller, document_id: str) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id)
    return {"documentId": doc.id, "sections": sections.tree(library.require_ready(doc))}


# ---- intents, constraints, salience ------------------------------------------------------------


async def declare_intent(
    session: AsyncSession, caller: Caller, document_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    require_writer(agent, "declare intents")
    _section(doc, body["sectionId"])
    intent = DocumentIntent(
        id=new_id(),
        document_id=doc.id,
        section_id=body["sectionId"],
        agent_id=agent.id,
        agent_name=agent.agent_name,
        goal=body["goal"],
        category=body.get("category") or "general",
        created_at=utcnow(),
    )
    session.add(intent)
    await session.flush()
    view = intent_view(intent)
    await _record(
        session,
        agent_ctx(caller, agent),
        doc,
        "pact.intent.declared",
        "intent.declare",
        section_id=intent.section_id,
        data=view,
        entity=("intent", intent.id),
    )
    return view


def intent_view(i: DocumentIntent) -> dict[str, Any]:
    return {
        "intentId": i.id,
        "sectionId": i.section_id,
        "goal": i.goal,
        "category": i.category,
        "agentId": i.agent_id,
        "agentName": i.agent_name,
        "createdAt": iso(i.created_at),
    }


async def list_intents(
    session: AsyncSession, caller: Caller, document_id: str, section_id: str | None
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id)
    stmt = select(DocumentIntent).where(DocumentIntent.document_id == doc.id)
    if section_id:
        stmt = stmt.where(DocumentIntent.section_id == section_id)
    rows = (await session.scalars(stmt.order_by(DocumentIntent.created_at, DocumentIntent.id))).all()
    return {"intents": [intent_view(i) for i in rows]}


def constraint_view(c: DocumentConstraint) -> dict[str, Any]:
    return {
        "constraintId": c.id,
        "sectionId": c.section_id,
        "boundary": c.boundary,
        "type": c.type,
        "agentId": c.agent_id,
        "agentName": c.agent_name,
        "createdAt": iso(c.created_at),
    }


async def publish_constraint(
    session: AsyncSession, caller: Caller, document_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    require_writer(agent, "publish constraints")
    _section(doc, body["sectionId"])
    c = DocumentConstraint(
        id=new_id(),
        document_id=doc.id,
        section_id=body["sectionId"],
        agent_id=agent.id,
        agent_name=agent.agent_name,
        boundary=body["boundary"],
        type=body.get("type") or "must_not",
        created_at=utcnow(),
    )
    session.add(c)
    await session.flush()
    view = constraint_view(c)
    await _record(
        session,
        agent_ctx(caller, agent),
        doc,
        "pact.constraint.published",
        "constraint.publish",
        section_id=c.section_id,
        data=view,
        entity=("constraint", c.id),
    )
    return view


async def list_constraints(
    session: AsyncSession, caller: Caller, document_id: str, section_id: str | None
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id)
    stmt = select(DocumentConstraint).where(DocumentConstraint.document_id == doc.id)
    if section_id:
        stmt = stmt.where(DocumentConstraint.section_id == section_id)
    rows = (await session.scalars(stmt.order_by(DocumentConstraint.created_at, DocumentConstraint.id))).all()
    return {"constraints": [constraint_view(c) for c in rows]}


async def set_salience(
    session: AsyncSession, caller: Caller, document_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    _section(doc, body["sectionId"])
    row = await session.scalar(
        select(DocumentSalience).where(
            DocumentSalience.document_id == doc.id,
            DocumentSalience.section_id == body["sectionId"],
            DocumentSalience.agent_id == agent.id,
        )
    )
    before = {"score": row.score} if row else None
    if row is None:
        row = DocumentSalience(
            id=new_id(),
            document_id=doc.id,
            section_id=body["sectionId"],
            agent_id=agent.id,
            agent_name=agent.agent_name,
        )
        session.add(row)
    row.score = int(body["score"])
    row.created_at = utcnow()
    await session.flush()
    view = {
        "sectionId": row.section_id,
        "agentId": agent.id,
        "agentName": agent.agent_name,
        "score": row.score,
        "createdAt": iso(row.created_at),
    }
    await _record(
        session,
        agent_ctx(caller, agent),
        doc,
        "pact.salience.set",
        "salience.set",
        section_id=row.section_id,
        data=view,
        before=before,
    )
    return view


async def salience(session: AsyncSession, caller: Caller, document_id: str) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id)
    rows = (
        await session.scalars(
            select(DocumentSalience)
            .where(DocumentSalience.document_id == doc.id)
            .order_by(DocumentSalience.section_id, DocumentSalience.agent_name)
        )
    ).all()
    per: dict[str, list[DocumentSalience]] = defaultdict(list)
    for r in rows:
        per[r.section_id].append(r)
    return {
        "salience": [
            {
                "sectionId": sid,
                "scores": [
                    {"agentId": r.agent_id, "agentName": r.agent_name, "score": r.score} for r in items
                ],
                "average": round(sum(r.score for r in items) / len(items), 2),
            }
            for sid, items in per.items()
        ],
        "entries": [
            {"agentId": r.agent_id, "agentName": r.agent_name, "sectionId": r.section_id, "score": r.score}
            for r in rows
        ],
    }


# ---- section locks ---------------------------------------------------------------------------------


def lock_view(lock: SectionLock) -> dict[str, Any]:
    return {
        "sectionId": lock.section_id,
        "lockedBy": lock.agent_id,
        "lockedByName": lock.agent_name,
        "ttlSeconds": lock.ttl_seconds,
        "expiresAt": iso(lock.expires_at),
    }


async def live_lock(session: AsyncSession, document_id: str, section_id: str) -> SectionLock | None:
    lock = await session.scalar(
        select(SectionLock).where(
            SectionLock.document_id == document_id, SectionLock.section_id == section_id
        )
    )
    return lock if lock is not None and lock.expires_at > utcnow() else None


async def assert_unlocked_for(
    session: AsyncSession, document_id: str, section_id: str, agent_id: str
) -> None:
    """409 when another agent holds a live lock on the section (proposals honour locks)."""
    lock = await live_lock(session, document_id, section_id)
    if lock is not None and lock.agent_id != agent_id:
        raise Conflict(
            f"section {section_id} is locked by {lock.agent_name}",
            code="section.locked",
            lockedBy=lock.agent_id,
            expiresAt=iso(lock.expires_at),
        )


async def lock_section(
    session: AsyncSession, caller: Caller, document_id: str, section_id: str, ttl_seconds: int
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    require_writer(agent, "lock sections")
    _section(doc, section_id)
    now = utcnow()
    lock = await session.scalar(
        select(SectionLock).where(SectionLock.document_id == doc.id, SectionLock.section_id == section_id)
    )
    if lock is not None and lock.expires_at > now and lock.agent_id != agent.id:
        raise Conflict(
            f"section {section_id} is locked by {lock.agent_name}",
            code="section.locked",
            lockedBy=lock.agent_id,
            expiresAt=iso(lock.expires_at),
        )
    if lock is None:
        lock = SectionLock(id=new_id(), document_id=doc.id, section_id=section_id)
        session.add(lock)
    lock.agent_id = agent.id
    lock.agent_name = agent.agent_name
    lock.ttl_seconds = ttl_seconds
    lock.created_at = now
    lock.expires_at = now + timedelta(seconds=ttl_seconds)
    await session.flush()
    view = lock_view(lock)
    await _record(
        session,
        agent_ctx(caller, agent),
        doc,
        "pact.section.locked",
        "section.lock",
        section_id=section_id,
        data=view,
    )
    return view


async def unlock_section(
    session: AsyncSession, caller: Caller, document_id: str, section_id: str
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    lock = await live_lock(session, doc.id, section_id)
    if lock is None:
        raise NotFound(f"section {section_id} is not locked", code="lock.not_found")
    if lock.agent_id != agent.id:
        raise Forbidden(
            f"only the holder ({lock.agent_name}) can release this lock",
            code="lock.not_holder",
            lockedBy=lock.agent_id,
        )
    await session.delete(lock)
    await _record(
        session,
        agent_ctx(caller, agent),
        doc,
        "pact.section.unlocked",
        "section.unlock",
        section_id=section_id,
        data={"sectionId": section_id, "reason": "released"},
    )
    return {"sectionId": section_id, "unlocked": True}


async def expire_locks(session: AsyncSession) -> int:
    """Section locks end at their TTL: remove them and tell the document's stream."""
    expired = (
        await session.scalars(select(SectionLock).where(SectionLock.expires_at <= utcnow()).with_for_update())
    ).all()
    for lock in expired:
        doc = await session.get(Document, lock.document_id)
        await session.execute(delete(SectionLock).where(SectionLock.id == lock.id))
        if doc is not None:
            await _record(
                session,
                SYSTEM,
                doc,
                "pact.section.unlocked",
                "section.unlock",
                section_id=lock.section_id,
                data={"sectionId": lock.section_id, "reason": "expired", "lockedBy": lock.agent_id},
            )
    return len(expired)


# ---- escalation ----------------------------------------------------------------------------------


async def escalate(
    session: AsyncSession, caller: Caller, document_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    question = body.get("question") or body.get("message")
    if not question:
        raise BadRequest("question is required (the PACT CLI sends it as message)", field="question")
    if body.get("sectionId"):
        _section(doc, body["sectionId"])
    if body.get("proposalId"):
        found = await session.scalar(
            select(Proposal.id).where(
                Proposal.id == body["proposalId"],
                Proposal.resource_type == "document",
                Proposal.resource_id == doc.id,
            )
        )
        if found is None:
            raise NotFound(f"proposal {body['proposalId']} not found", code="proposal.not_found")
    result = await escalations.create(
        session,
        agent_ctx(caller, agent),
        resource_type="document",
        resource_id=doc.id,
        message=question,
        section_id=body.get("sectionId"),
        proposal_id=body.get("proposalId"),
        priority=body.get("priority") or "medium",
    )
    return {
        "escalationId": result["escalationId"],
        "status": result["status"],
        "question": question,
        "sectionId": result["sectionId"],
        "proposalId": result["proposalId"],
        "priority": result["priority"],
        "createdAt": result["createdAt"],
    }


# ---- events and poll -------------------------------------------------------------------------------


async def event_page(
    session: AsyncSession, caller: Caller, document_id: str, *, after: int, limit: int
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id)
    return await events.page(session, library.stream(doc.id), after=after, limit=limit)


def _cursor(value: str | None) -> int:
    if not value:
        return 0
    raw = value.removeprefix("evt_")
    if not raw.isdigit():
        raise BadRequest("since must be a cursor from an earlier poll (evt_<n>)", field="since")
    return int(raw)


async def poll(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    *,
    since: str | None,
    section_id: str | None,
    limit: int,
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id)
    after = _cursor(since)
    page = await events.page(session, library.stream(doc.id), after=after, limit=limit)
    changes = [
        {
            "type": e["type"],
            "agent": e["agentName"],
            "agentId": e["agentId"],
            "section": e["sectionId"],
            "cursor": f"evt_{e['sequenceNumber']}",
            "data": e["data"],
            "createdAt": e["createdAt"],
        }
        for e in page["events"]
        if not section_id or e["sectionId"] == section_id
    ]
    last = page["events"][-1]["sequenceNumber"] if page["events"] else after
    return {
        "since": since or "evt_0",
        "changes": changes,
        "cursor": f"evt_{last}",
        "hasMore": page["hasMore"],
    }
