"""Session awareness on a document (PACT v2.0.3 §4.4): `_status`, `manifest`, `_heartbeat`, `mark-read` and
`_onboard`, through the shared implementation (domain/consensus/sessions.py). The document's members are its
active agents (each the service key that joined it); they are all of the document's organisation, so no
counterparty is ever cross-org here. A document is never closed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import records, sessions
from domain.documents import agent_events, library
from domain.documents import agents as tap
from domain.documents.access import Caller
from domain.documents.membership import WRITER_ROLES, agent_ctx, membership
from domain.documents.models import Document, DocumentAgent
from domain.documents.proposals import DocumentResource
from domain.documents.records import VOCABULARY
from domain.kernel import audit, principals
from domain.kernel.clock import utcnow
from domain.kernel.errors import Conflict, Forbidden
from domain.kernel.event_record import cursor_of
from domain.kernel.ids import new_id
from domain.kernel.settings import get_settings

PactRole = sessions.PactRole
# The document role each PACT role descriptor joins as, and the PACT role a document role implies.
DOCUMENT_ROLE = {PactRole.OBSERVER: "observer", PactRole.CONTRIBUTOR: "editor", PactRole.PROPOSER: "editor"}
IMPLIED_PACT_ROLE = {"observer": PactRole.OBSERVER}

RESOURCE = "document"
TRUST = {"observer": sessions.TrustLevel.OBSERVER}


def _timeout() -> int:
    return get_settings().pact_heartbeat_timeout_seconds


async def fabric_of(session: AsyncSession, doc: Document) -> sessions.Fabric:
    rows = (
        await session.scalars(
            select(DocumentAgent)
            .where(DocumentAgent.document_id == doc.id, DocumentAgent.status == "active")
            .order_by(DocumentAgent.joined_at, DocumentAgent.id)
        )
    ).all()
    members = tuple(
        sessions.Member(
            id=a.id,
            name=a.agent_name,
            role=a.role,
            trust_level=TRUST.get(a.role, sessions.TrustLevel.COLLABORATOR),
            org=doc.org_id,
            joined_at=a.joined_at,
            pact_role=IMPLIED_PACT_ROLE.get(a.role, PactRole.CONTRIBUTOR),
        )
        for a in rows
    )
    return sessions.Fabric(RESOURCE, doc.id, members)


async def _joined(
    session: AsyncSession, caller: Caller, document_id: str, *, code: str = "agent.not_joined"
) -> tuple[Document, DocumentAgent, sessions.Fabric]:
    doc = await library.get(session, caller, document_id)
    agent = await membership(session, caller, doc)
    if agent is None:
        raise Forbidden("join the document first (POST …/join or …/_onboard)", code=code)
    return doc, agent, await fabric_of(session, doc)


async def status(
    session: AsyncSession, caller: Caller, document_id: str, include: str | None
) -> sessions.Status:
    parts = sessions.parse_include(include)
    _doc, agent, fabric = await _joined(session, caller, document_id)
    return await sessions.status(session, fabric, agent.id, parts, _timeout())


async def manifest(session: AsyncSession, caller: Caller, document_id: str) -> sessions.Manifest:
    # §17.13: a non-member gets 403 auth.forbidden from /manifest, never a partial manifest.
    _doc, agent, fabric = await _joined(session, caller, document_id, code="auth.forbidden")
    return await sessions.manifest(session, fabric, agent.id, _timeout())


async def heartbeat(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    *,
    client_heartbeat_id: str,
    attention_required: bool,
    observed_event_id: str | None,
) -> sessions.Heartbeat:
    _doc, agent, fabric = await _joined(session, caller, document_id)
    return await sessions.heartbeat(
        session,
        agent_ctx(caller, agent),
        fabric,
        agent.id,
        client_heartbeat_id=client_heartbeat_id,
        attention_required=attention_required,
        observed_event_id=observed_event_id,
        timeout=_timeout(),
    )


async def mark_read(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    *,
    from_event_id: str | None,
    to_event_id: str | None,
    from_seq: int | None,
    to_seq: int | None,
) -> sessions.MarkRead:
    _doc, agent, fabric = await _joined(session, caller, document_id)
    return await sessions.mark_read(
        session,
        agent_ctx(caller, agent),
        fabric,
        agent.id,
        from_event_id=from_event_id,
        to_event_id=to_event_id,
        from_seq=from_seq,
        to_seq=to_seq,
    )


async def onboard(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    join: tap.JoinRequest,
    drafts: Sequence[sessions.ConstraintDraft],
    *,
    declared_role: PactRole | None = None,
    contact: Mapping[str, str] | None = None,
    ceilings: Mapping[str, int] | None = None,
) -> sessions.Onboarded[DocumentAgent]:
    """Join and publish constraints in one transaction (§4.4.5): every check first (the join's, then each
    constraint's), then the membership, one `pact.fabric.onboarded` event (no `pact.agent.joined`) and the
    constraints, whose `pact.constraint.published` events carry its id as their correlationId. A refusal
    writes nothing. `join` is what a join asks for; without an agent name the key's name is the agent's.
    `declared_role` is PACT's role descriptor as the caller gave it (answered and recorded as given; the
    document role is `join.role`); `ceilings` is the document's disclosure policy, if it has one."""
    doc = await library.get(session, caller, document_id, for_update=True)
    if await membership(session, caller, doc) is not None:
        raise Conflict(
            "this key has already joined the document; publish more constraints with POST …/constraints",
            code="agent.already_joined",
        )
    role = join.role or "editor"
    content = await library.ready_content(doc)
    sessions.check_constraints(
        content, drafts, may_publish=role in WRITER_ROLES, role=declared_role or role, ceilings=ceilings
    )
    agent = await tap.admit(
        session,
        caller,
        doc,
        replace(join, agent_name=join.agent_name or caller.name),
        pact_role=declared_role,
        contact=contact,
    )
    ctx = agent_ctx(caller, agent)
    fabric = await fabric_of(session, doc)
    ids = [new_id() for _ in drafts]
    registration = agent_events.registration(agent)
    seq = await sessions.record_onboarded(
        session,
        ctx,
        fabric,
        registration=registration,
        member_id=agent.id,
        role=declared_role or agent.role,
        constraint_ids=ids,
        principal=principals.of_agent(agent.id, caller.principal),
    )
    published = [
        await records.publish_constraint(
            session,
            ctx,
            DocumentResource(doc),
            VOCABULARY,
            section_id=draft.section_id,
            boundary=draft.boundary,
            kind=draft.category,
            constraint_id=cid,
            correlation_id=cursor_of(seq),
        )
        for cid, draft in zip(ids, drafts, strict=True)
    ]
    audit.record(
        session, ctx, "document.onboard", "document", doc.id, after={**registration, "constraintIds": ids}
    )
    return sessions.Onboarded(doc.id, agent, declared_role or agent.role, published, seq, utcnow())
