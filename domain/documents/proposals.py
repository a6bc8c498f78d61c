"""Proposals on a document, through the shared consensus engine (domain/consensus.py). Under the default
approval policy (DESIGN.md): approved (merged) when approvals reach min(2, eligible) with no objection,
rejected when rejections do, paused as `objected` by any objection until a human decides; the document's
owner may choose a PACT policy instead (domain/consensus/policies.py). Eligible voters are the document's
active editors and reviewers except the author (and the author too where the policy lets it approve)."""

from __future__ import annotations

from enum import StrEnum

from sqlalchemy import bindparam, exists, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import engine as consensus
from domain.consensus import locks, policies, profiles, sections, withdrawal
from domain.consensus.models import Proposal
from domain.consensus.session_models import SessionPresence
from domain.documents import library, library_events
from domain.documents.access import Caller
from domain.documents.membership import WRITER_ROLES, agent_ctx, capabilities, member, require_writer
from domain.documents.models import Document, DocumentAgent
from domain.kernel import audit
from domain.kernel.clock import utcnow
from domain.kernel.errors import BadRequest, Conflict, Forbidden
from domain.kernel.ids import canonical_ref
from domain.kernel.sqlutil import for_update

DEFAULT_TTL = 300
# Section locks on a document (domain/consensus/locks.py; taken and released in domain/documents/locks.py):
# spec/document-api.md lets ttlSeconds run to an hour, and its error codes are dotted.
LOCK_RULES = locks.Rules(
    max_ttl_seconds=3_600,
    section_not_found="section.not_found",
    section_locked="section.locked",
    not_locked="lock.not_found",
    not_holder="lock.not_holder",
)


class ProposalStatus(StrEnum):
    """Where a document proposal stands."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    OBJECTED = "objected"
    EXPIRED = "expired"
    SUPERSEDED = "superseded"
    WITHDRAWN = "withdrawn"  # by its author, while pending


_DA = DocumentAgent

# A vote reads its proposal (locked: the document is already), how many may vote on it (active agents of
# the document with a voting role, its author aside) and whether its author still is such an agent (a voter
# too where the document's approval policy lets an author approve its own proposal), in one statement.
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
        exists()
        .where(_DA.id == Proposal.author_id, _DA.status == "active", _DA.role.in_(WRITER_ROLES))
        .correlate(Proposal),
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
        key = canonical_ref(proposal_id)
        params = {"p_proposal": key, "p_document": self.doc.id}
        row = (await session.execute(_BALLOT, params)).first() if key else None
        if row is None:
            return consensus.Ballot(None, 0, False)
        proposal, voters, author_votes = row
        may_vote = voter.status == "active" and voter.role in WRITER_ROLES
        voters = int(voters or 0) + (1 if author_votes and self.approval.author_votes else 0)
        return consensus.Ballot(proposal, voters, may_vote)

    async def read(self, session: AsyncSession) -> tuple[str, int]:
        return await library.ready_content(self.doc), self.doc.version

    @property
    def row(self) -> Document:
        return self.doc

    @property
    def approval(self) -> policies.Approval:
        return policies.of(self.doc)

    async def voters(self, session: AsyncSession, author_id: str) -> dict[str, str | None]:
        rows = await session.execute(
            select(_DA.id, SessionPresence.principal_id)
            .outerjoin(
                SessionPresence, profiles.joins_presence(SessionPresence, "document", _DA.document_id, _DA.id)
            )
            .where(
                _DA.document_id == self.doc.id,
                _DA.status == "active",
                _DA.role.in_(WRITER_ROLES),
                _DA.id != author_id,
            )
        )
        return {agent_id: principal for agent_id, principal in rows.all()}


POLICY = consensus.Policy(name="document", accepted_status="approved", objection_pauses=True)


def _can(agent: DocumentAgent, capability: str) -> None:
    require_writer(agent, capability)
    if capability not in capabilities(agent):
        raise Forbidden(f"this agent joined without the {capability} capability", code="capability.missing")


async def propose(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    *,
    section_id: str,
    content: str,
    summary: str,
    ttl_seconds: int | None = None,
    proposal_id: str | None = None,
) -> Proposal:
    """The caller's agent proposes `content` for a section, open for votes `ttl_seconds` (DEFAULT_TTL when
    None); `proposal_id` names it (propose_named), else it gets a new id."""
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    _can(agent, "propose")
    library.require_ready(doc)
    resource = DocumentResource(doc, locked=True)
    await locks.assert_unlocked_for(session, resource, LOCK_RULES, section_id, agent.id)
    proposal = await consensus.propose(
        session,
        agent_ctx(caller, agent),
        resource,
        POLICY,
        section_id=section_id,
        new_content=content,
        summary=summary,
        ttl_seconds=int(ttl_seconds or DEFAULT_TTL),
        proposal_id=proposal_id,
    )
    return proposal


async def propose_named(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    *,
    proposal_id: str,
    section_id: str,
    summary: str,
    text: str | None,
    ttl_seconds: int | None,
) -> tuple[Proposal, bool]:
    """A proposal the caller names (a correlation handle later steps use): made once, then answered again.

    A repeat of the id on the same document is the same proposal (not made anew: `False`); an id taken by
    another resource's proposal is a 409. Without `text` the proposal is a position to agree on, not an edit:
    it carries the section's current text, so merging it leaves the section as it is."""
    existing = await session.get(Proposal, proposal_id)
    if existing is not None:
        if existing.resource_type != "document" or existing.resource_id != document_id:
            raise Conflict(f"proposal id {proposal_id} is taken", code="proposal.id_taken")
        return existing, False
    if text is None:
        content = await library.ready_content(await library.get(session, caller, document_id))
        found = sections.find(content, section_id)
        text = content[found.body_from : found.body_to] if found is not None else ""
    return await propose(
        session,
        caller,
        document_id,
        section_id=section_id,
        content=text,
        summary=summary,
        ttl_seconds=ttl_seconds,
        proposal_id=proposal_id,
    ), True


async def list_proposals(
    session: AsyncSession, caller: Caller, document_id: str, *, section_id: str | None, status: str | None
) -> list[Proposal]:
    """The document's proposals, oldest first, by section and status when given."""
    doc = await library.get(session, caller, document_id)
    if status and status not in set(ProposalStatus):
        raise BadRequest(f"status must be one of {', '.join(ProposalStatus)}", field="status")
    stmt = select(Proposal).where(Proposal.resource_type == "document", Proposal.resource_id == doc.id)
    if section_id:
        stmt = stmt.where(Proposal.section_id == section_id)
    if status:
        stmt = stmt.where(Proposal.status == status)
    return list((await session.scalars(stmt.order_by(Proposal.created_at, Proposal.id))).all())


async def vote(
    session: AsyncSession, caller: Caller, document_id: str, proposal_id: str, kind: str, reason: str | None
) -> consensus.VoteCast:
    doc = await library.get(session, caller, document_id, for_update=True)
    agent = await member(session, caller, doc)
    _can(agent, "vote")
    resource = DocumentResource(doc, locked=True)
    ballot = await resource.ballot(session, proposal_id, agent)
    return await consensus.vote(
        session, agent_ctx(caller, agent), resource, POLICY, proposal_id, kind, reason, ballot=ballot
    )


async def withdraw(session: AsyncSession, caller: Caller, document_id: str, proposal_id: str) -> Proposal:
    """The agent that made a pending proposal withdraws it (the key acting as that agent on the document)."""
    doc = await library.get(session, caller, document_id)  # locked by the engine, after the escalations
    agent = await member(session, caller, doc)
    return await withdrawal.withdraw(
        session, agent_ctx(caller, agent), DocumentResource(doc), POLICY, proposal_id
    )


async def _load(
    session: AsyncSession, resource_type: str, resource_id: str
) -> tuple[DocumentResource, consensus.Policy] | None:
    if resource_type != "document":
        return None
    doc = await session.get(Document, resource_id)
    return (DocumentResource(doc), POLICY) if doc is not None else None


# The TTL sweep's batch: document proposals, but none of a human-only document (they wait for a person).
_SWEPT = (
    Proposal.resource_type == "document",
    ~exists().where(
        Document.id == Proposal.resource_id,
        Document.approval_policy == policies.ApprovalPolicy.HUMAN_ONLY.value,
    ),
)


async def expire_proposals(session: AsyncSession) -> int:
    """At a proposal's TTL, by the document's approval policy (under the default: accepted if it has an
    approval and no rejection or objection, else expired)."""
    return await consensus.expire_due(session, _load, where=_SWEPT)


async def set_approval(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    *,
    policy: policies.ApprovalPolicy | None,
    allow_self_approval: bool | None,
) -> library.Metadata:
    """The document's owner (the key that uploaded it) sets its approval policy and self-approval flag."""
    doc = await library.get(session, caller, document_id, for_update=True)
    if doc.owner_key_id != caller.key_id:
        raise Forbidden(
            "only the key that uploaded the document may change its approval policy", code="not_owner"
        )
    resource = DocumentResource(doc, locked=True)
    before = resource.approval
    if policy is not None:
        doc.approval_policy = policy.value
    if allow_self_approval is not None:
        doc.allow_self_approval = allow_self_approval
    if resource.approval != before:
        doc.updated_at = utcnow()
        await consensus.approval_changed(session, caller.ctx, resource, before)
        audit.record(
            session,
            caller.ctx,
            "document.approval_policy",
            "document",
            doc.id,
            before=library_events.approval(before),
            after=library_events.approval(resource.approval),
        )
    return await library.metadata(session, caller, doc.id)
