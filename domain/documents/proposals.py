"""Proposals on a document, through the shared consensus engine (domain/consensus.py) with the
document policy of DESIGN.md: approved (merged) when approvals reach min(2, eligible) with no
objection, rejected when rejections do, paused as `objected` by any objection until a human decides.
Eligible voters are the document's active editors and reviewers except the author."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import engine as consensus
from domain.consensus.models import Proposal
from domain.documents import library, locks
from domain.documents.access import Caller
from domain.documents.membership import WRITER_ROLES, agent_ctx, capabilities, member, require_writer
from domain.documents.models import Document, DocumentAgent
from domain.kernel.clock import canonical_id, iso, utcnow
from domain.kernel.errors import BadRequest, Forbidden
from domain.kernel.sqlutil import for_update

DEFAULT_TTL = 300
STATUSES = ("pending", "approved", "rejected", "objected", "expired", "superseded")


_DA = DocumentAgent

# A vote reads its proposal (locked: the document is already) and how many may vote on it (active agents of
# the document with a voting role, its author aside) in one statement.
_BALLOT = (
    select(
        Proposal,
        select(func.count())
        .where(
            _DA.document_id == Proposal.resource_id,
            _DA.status == "active",
            _DA.role.in_(WRITER_ROLES),
            _DA.id != Proposal.author_id,
        )
        .correlate(Proposal)
        .scalar_subquery(),
    )
    .where(
        Proposal.id == bindparam("p_proposal"),
        Proposal.resource_type == "document",
        Proposal.resource_id == bindparam("p_document"),
    )
    .with_for_update(of=Proposal, key_share=True)
    .execution_options(populate_existing=True)
)


class DocumentResource:
    """The consensus engine's view of one document."""

    resource_type = "document"

    def __init__(self, doc: Document, *, locked: bool = False) -> None:
        self.doc = doc
        self.resource_id = doc.id
        self.locked = locked  # loaded with its row lock (library.get(for_update=True)): one lock per request

    async def lock(self, session: AsyncSession) -> None:
        if not self.locked:
            # The row as committed when the lock is granted (populate_existing): a document loaded before
            # the lock (the review desk's decision) must not merge into content another merge has replaced.
            locked = await session.scalar(for_update(select(Document).where(Document.id == self.doc.id)))
            if locked is not None:
                self.doc = locked
            self.locked = True

    async def ballot(self, session: AsyncSession, proposal_id: str, voter: DocumentAgent) -> consensus.Ballot:
        """The vote's ballot under the document's lock (already held when loaded with `library.get`'s
        for_update): one statement. Whether the voter may vote is its own membership row's (the engine
        refuses an author's vote before it asks)."""
        await self.lock(session)
        key = canonical_id(proposal_id)
        params = {"p_proposal": key, "p_document": self.doc.id}
        row = (await session.execute(_BALLOT, params)).first() if key else None
        if row is None:
            return consensus.Ballot(None, 0, False)
        proposal, voters = row
        may_vote = voter.status == "active" and voter.role in WRITER_ROLES
        return consensus.Ballot(proposal, int(voters or 0), may_vote)

    async def read(self, session: AsyncSession) -> tuple[str, int]:
        return await library.ready_content(self.doc), self.doc.version

    @property
    def row(self) -> Document:
        return self.doc


POLICY = consensus.Policy(name="document", accepted_status="approved", objection_pauses=True)


def view(p: Proposal) -> dict[str, Any]:
    return {
        "proposalId": p.id,
        "sectionId": p.section_id,
        "agentId": p.author_id,
        "agentName": p.author_name,
        "summary": p.summary,
        "content": p.new_content,
        "status": p.status,
        "votes": {"approve": p.approve_count, "reject": p.reject_count, "object": p.object_count},
        "ttlSeconds": p.ttl_seconds,
        "createdAt": iso(p.created_at),
        "expiresAt": iso(p.expires_at),
        "resolvedAt": iso(p.resolved_at),
    }


def _can(agent: DocumentAgent, capability: str) -> None:
    require_writer(agent, capability)
    if capability not in capabilities(agent):
        raise Forbidden(f"this agent joined without the {capability} capability", code="capability.missing")


async def propose(
    session: AsyncSession, caller: Caller, document_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    _can(agent, "propose")
    library.require_ready(doc)
    await locks.assert_unlocked_for(session, doc.id, body["sectionId"], agent.id)
    proposal = await consensus.propose(
        session,
        agent_ctx(caller, agent),
        DocumentResource(doc, locked=True),
        POLICY,
        section_id=body["sectionId"],
        new_content=body["content"],
        summary=body["summary"],
        ttl_seconds=int(body.get("ttlSeconds") or DEFAULT_TTL),
    )
    return view(proposal)


async def list_proposals(
    session: AsyncSession, caller: Caller, document_id: str, *, section_id: str | None, status: str | None
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id)
    if status and status not in STATUSES:
        raise BadRequest(f"status must be one of {', '.join(STATUSES)}", field="status")
    stmt = select(Proposal).where(Proposal.resource_type == "document", Proposal.resource_id == doc.id)
    if section_id:
        stmt = stmt.where(Proposal.section_id == section_id)
    if status:
        stmt = stmt.where(Proposal.status == status)
    rows = (await session.scalars(stmt.order_by(Proposal.created_at, Proposal.id))).all()
    return {"proposals": [view(p) for p in rows], "total": len(rows)}


async def vote(
    session: AsyncSession, caller: Caller, document_id: str, proposal_id: str, kind: str, reason: str | None
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    _can(agent, "vote")
    resource = DocumentResource(doc, locked=True)
    ballot = await resource.ballot(session, proposal_id, agent)
    result = await consensus.vote(
        session, agent_ctx(caller, agent), resource, POLICY, proposal_id, kind, reason, ballot=ballot
    )
    return {
        "proposalId": result["proposalId"],
        "vote": kind,
        "votedAt": iso(utcnow()),
        "status": result["status"],
        "votes": {
            "approve": result["approveCount"],
            "reject": result["rejectCount"],
            "object": result["objectCount"],
        },
        "requiredApprovals": result["requiredApprovals"],
    }


async def _load(
    session: AsyncSession, resource_type: str, resource_id: str
) -> tuple[DocumentResource, consensus.Policy] | None:
    if resource_type != "document":
        return None
    doc = await session.get(Document, resource_id)
    return (DocumentResource(doc), POLICY) if doc is not None else None


async def expire_proposals(session: AsyncSession) -> int:
    """At a proposal's TTL: accepted if it has an approval and no rejection or objection, else expired."""
    return await consensus.expire_due(session, _load)
