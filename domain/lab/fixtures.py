"""The PACT conformance lab's fixtures (`concord pact lab`): the resources, principals, memberships and
proposal that the conformance vectors of PACT v2.0.3 (spec/v2.0/conformance) take as their preconditions,
seeded through the same domain operations the API uses.

Every vector's resource is a document of one lab organisation whose id is the vector's own
(`doc_abc123`, `fab_hb_001`, …): a document's id is any string of up to 36 characters
(domain/documents/library.py), so no alias is needed and nothing about ids is loosened elsewhere. A vector's
principal (a DID such as `did:web:alice.example`) is a service key of the lab organisation named by the DID;
the lab's web layer (web/lab/) turns the vectors' `X-Pact-Principal` header, or a resource's default
principal, into that key. Nothing here is reachable from `concord serve`.

Each principal's key carries its DID as the key's attested principal (as `concord keys create --principal`
does), so members' principal_id is the vector's DID, and two DIDs of different registrable domains are
cross-org (domain/kernel/principals.py). A vector's session facts are seeded as state: a member's PACT role,
contact and last_seen into its session profile, a proposal's vote deadline onto its obligations. A fabric's
disclosure policy (`policy`) is the one fact the lab's web layer hands to `_onboard` (web/lab/app.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import select, update

from domain.consensus import sessions
from domain.consensus.session_models import PendingObligation
from domain.documents import agents, blobs, convert, library, proposals, records, sandbox
from domain.documents.access import Caller
from domain.documents.models import DocumentAgent, Organisation, ServiceKey
from domain.documents.servicekeys import PREFIX, SCOPES, actor_of
from domain.kernel import invites, keys, outbox
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.db import Database
from domain.kernel.ids import new_id
from domain.kernel.invites import ResourceKind

ORGANISATION = "PACT conformance lab"
OWNER = "did:web:lab-owner.example"
AUTHOR = "did:web:lab-author.example"  # proposes the fixtures' proposals (an author never votes on its own)
INVITE_TOKEN = "invite_xyz"
PROPOSAL_TTL_SECONDS = 86_400
# The heartbeat vector's timeout (its `heartbeat_timeout_seconds`): the lab runs with it, whatever the
# environment sets for the real server (web/lab/serve.py).
HEARTBEAT_TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class LabConstraint:
    section_id: str
    boundary: str


@dataclass(frozen=True)
class LabMember:
    principal: str
    agent_name: str
    role: str = "editor"  # the document role; `pact_role` is the vector's
    pact_role: str = "contributor"
    constraints: tuple[LabConstraint, ...] = ()
    last_seen_seconds_ago: int | None = None
    contact: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LabProposal:
    proposal_id: str
    section_id: str
    summary: str
    required_voters: tuple[str, ...]
    due_by: str


@dataclass(frozen=True)
class LabResource:
    resource_id: str
    title: str
    sections: tuple[str, ...]  # headings; `sec:` + slug ids
    default_principal: str | None = None  # who a request without X-Pact-Principal acts as
    members: tuple[LabMember, ...] = ()
    proposals: tuple[LabProposal, ...] = ()
    invite_token: str | None = None
    policy: dict[str, int] = field(default_factory=dict)


FIXTURES: tuple[LabResource, ...] = (
    LabResource("doc_abc123", "Join fixture", ("Overview", "Terms"), invite_token=INVITE_TOKEN),
    LabResource(
        "fab_abc123", "Onboarding fixture", ("Risk", "Budget"), default_principal="did:web:knox.example"
    ),
    LabResource(
        "fab_pf_abc123",
        "Onboarding refusal fixture",
        ("Rate limit per minute", "Disclosure ceiling"),
        default_principal="did:web:knox.example",
        policy={"max_disclosure_ceiling": 2},
    ),
    LabResource(
        "fab_hb_001",
        "Heartbeat fixture",
        ("Status",),
        default_principal="did:web:alice.example",
        members=(
            LabMember("did:web:alice.example", "alice-bot", last_seen_seconds_ago=5),
            LabMember("did:web:bob.example", "bob-bot", last_seen_seconds_ago=120),
        ),
    ),
    LabResource(
        "fab_xorg_001",
        "Cross-organisation manifest fixture",
        ("Rate limit per minute", "Disclosure ceiling"),
        default_principal="did:web:org-a.example",
        members=(
            LabMember(
                "did:web:org-a.example",
                "alice-bot",
                constraints=(LabConstraint("sec:rate-limit-per-minute", "30"),),
                contact={
                    "email": "alice@org-a.example",
                    "escalation_hook": "https://alerts.org-a.example/inbox",
                },
            ),
            LabMember(
                "did:web:org-b.example",
                "bob-bot",
                constraints=(
                    LabConstraint("sec:rate-limit-per-minute", "60"),
                    LabConstraint("sec:disclosure-ceiling", "1"),
                ),
                contact={
                    "email": "bob@org-b.example",
                    "escalation_hook": "https://alerts.org-b.example/inbox",
                },
            ),
        ),
        proposals=(
            LabProposal(
                "prop_xorg_vote", "sec:disclosure-ceiling", "Vote owed by bob", ("did:web:org-b.example",), ""
            ),
        ),
    ),
    LabResource(
        "fab_obl_001",
        "Obligation fixture",
        ("Payment terms",),
        default_principal="did:web:bob.example",
        members=(LabMember("did:web:bob.example", "bob-bot", pact_role="proposer"),),
        proposals=(
            LabProposal(
                "prop_xyz",
                "sec:payment-terms",
                "Proposal bob owes a vote on",
                ("did:web:bob.example",),
                "2026-05-16T10:00:00Z",
            ),
        ),
    ),
    LabResource(
        "fab_neg_smoke",
        "Two-agent negotiation fixture",
        ("Payment terms",),
        default_principal="did:web:alpha.example",
    ),
)
BY_ID = {r.resource_id: r for r in FIXTURES}


def markdown_of(resource: LabResource) -> str:
    """Top-level headings only, so each section's id is `sec:` + its slug (`sec:payment-terms`)."""
    return "".join(f"# {heading}\n\nFixture text of {heading.lower()}.\n\n" for heading in resource.sections)


def last_seen_of(member: LabMember, now: datetime) -> datetime | None:
    if member.last_seen_seconds_ago is None:
        return None
    return now - timedelta(seconds=member.last_seen_seconds_ago)


class Lab:
    """The seeded lab: its organisation and the keys of the principals it has seen."""

    def __init__(self, db: Database, blob_dir: Path) -> None:
        self.db = db
        self.blob_dir = blob_dir
        self.secrets: dict[str, str] = {}

    async def key_for(self, principal: str) -> str:
        """The principal's key (created the first time it is seen); its name is the DID."""
        found = self.secrets.get(principal)
        if found is None:
            async with self.db.transaction() as session:
                org = await session.scalar(select(Organisation).where(Organisation.name == ORGANISATION))
                assert org is not None, "the lab is not seeded"
                secret = keys.generate(PREFIX)
                session.add(
                    ServiceKey(
                        id=new_id(),
                        org_id=org.id,
                        name=principal,
                        key_hash=keys.hash_key(secret),
                        key_prefix=secret[:12],
                        scopes=list(SCOPES),
                        created_at=utcnow(),
                        principal=principal,
                    )
                )
            found = self.secrets.setdefault(principal, secret)
        return found

    async def _caller(self, principal: str) -> Caller:
        secret = await self.key_for(principal)
        async with self.db.read() as session:
            key = await session.scalar(select(ServiceKey).where(ServiceKey.key_hash == keys.hash_key(secret)))
        assert key is not None
        return Caller(
            ctx=Context(actor=actor_of(key)),
            org_id=key.org_id,
            key_id=key.id,
            name=key.name,
            principal=key.principal,
        )

    async def seed(self) -> None:
        """Every fixture: documents, the invite, then members, their constraints and the proposals."""
        self.secrets.clear()
        async with self.db.transaction() as session:
            from domain.documents import servicekeys

            await servicekeys.organisation(session, ORGANISATION, create=True)
        owner = await self._caller(OWNER)
        for resource in FIXTURES:
            writer = blobs.BlobWriter(self.blob_dir, 1 << 20)
            writer.write(markdown_of(resource).encode())
            rel = writer.commit(resource.resource_id)
            async with self.db.transaction() as session:
                await library.create(
                    session,
                    owner,
                    document_id=resource.resource_id,
                    blob_path=rel,
                    size=writer.size,
                    sha256=writer.sha256,
                    kind="markdown",
                    media_type="text/markdown",
                    filename=f"{resource.resource_id}.md",
                    title=resource.title,
                    tags=["pact-lab"],
                )
                # Converted here rather than by the worker, so that a reset answers within the runner's
                # 5 s: the same conversion (Markdown is read as itself) and the same completion the job
                # would record; the job, delivered later, finds the document ready and does nothing.
                text = convert.to_markdown("markdown", markdown_of(resource).encode())
                await library.convert_job(
                    session,
                    {"document_id": resource.resource_id, outbox.PREPARED: sandbox.Outcome(text, None, 0)},
                )
                if resource.invite_token:
                    await invites.issue(
                        session,
                        ResourceKind.DOCUMENT,
                        resource.resource_id,
                        created_by=owner.key_id,
                        token=resource.invite_token,
                    )
        for resource in FIXTURES:
            await self._populate(resource)

    async def _populate(self, resource: LabResource) -> None:
        for member in resource.members:
            caller = await self._caller(member.principal)
            async with self.db.transaction() as session:
                joined = await agents.join(
                    session,
                    caller,
                    resource.resource_id,
                    agents.JoinRequest(member.agent_name, role=member.role),
                )
                # The vector's session facts: the PACT role and contact it declared, when it was last seen.
                seen = last_seen_of(member, utcnow())
                await sessions.enrol(
                    session,
                    sessions.Fabric(agents.RESOURCE, resource.resource_id, ()),
                    joined.id,
                    principal=caller.principal,
                    pact_role=sessions.PactRole(member.pact_role),
                    contact=member.contact,
                    seen_at=seen,
                )
                if seen is not None:  # it was there before it was last seen: it joined then
                    await session.execute(
                        update(DocumentAgent).where(DocumentAgent.id == joined.id).values(joined_at=seen)
                    )
                for constraint in member.constraints:
                    await records.publish_constraint(
                        session,
                        caller,
                        resource.resource_id,
                        section_id=constraint.section_id,
                        boundary=constraint.boundary,
                        type_="must",
                    )
        if resource.proposals:
            author = await self._caller(AUTHOR)
            async with self.db.transaction() as session:
                await agents.join(session, author, resource.resource_id, agents.JoinRequest("lab-author"))
            for proposal in resource.proposals:
                async with self.db.transaction() as session:
                    await proposals.propose(
                        session,
                        author,
                        resource.resource_id,
                        section_id=proposal.section_id,
                        content=f"Proposed text ({proposal.proposal_id}).",
                        summary=proposal.summary,
                        ttl_seconds=PROPOSAL_TTL_SECONDS,
                        proposal_id=proposal.proposal_id,
                    )
                    if proposal.due_by:  # the vector's deadline for the votes, not the proposal's expiry
                        await session.execute(
                            update(PendingObligation)
                            .where(PendingObligation.proposal_id == proposal.proposal_id)
                            .values(due_by=datetime.fromisoformat(proposal.due_by))
                        )

    async def reset(self) -> None:
        """Every table emptied, then the fixtures seeded again (the runner's `POST /__reset`)."""
        from domain.tables import metadata

        async with self.db.engine.begin() as conn:
            for table in reversed(metadata.sorted_tables):
                await conn.execute(table.delete())
        await self.seed()
