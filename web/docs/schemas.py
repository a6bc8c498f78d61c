"""Pydantic models of the document API's requests and responses (they also build /openapi.json; the
tests check every real response body against the response models)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, StrictInt, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from domain.consensus import completions, engine, escalations, policies, records, sections
from domain.consensus import models as consensus_models
from domain.consensus.completions import SUMMARY_MAX, CompletionStatus
from domain.consensus.models import EscalationPriority, VoteKind, VoteKindField
from domain.consensus.policies import ApprovalPolicy
from domain.documents import agents as tap
from domain.documents import comments, library, membership, sharing
from domain.documents import models as document_models
from domain.documents.agents import Departure
from domain.documents.membership import ROLE_CAPABILITIES, DocumentRole
from domain.documents.models import DocumentStatusField
from domain.documents.proposals import ProposalStatus
from domain.kernel.clock import iso
from domain.kernel.vocabulary import SpeltOut
from domain.people import user_sessions
from web.kernel.collaboration import ConstraintStatusQuery, ConstraintWithdrawal, IntentLifecycle
from web.kernel.completions import STATUS_TEXT, SUMMARY_TEXT, DoneOut
from web.kernel.sessions_wire import ContactIn
from web.kernel.wire import (
    APPROVAL_POLICY_TEXT,
    HAS_LETTER_OR_DIGIT,
    ONE_OF_QUESTION_MESSAGE,
    SELF_APPROVAL_TEXT,
    DocumentPriorityIn,
    Exact,
    Rule,
    Text,
    Timestamp,
    Trimmed,
)

# An email address as the share links take it (domain/documents/sharing.py), and a domain name.
EMAIL = Rule(sharing.EMAIL_PATTERN, "must be an email address such as ada@example.org")
DOMAIN = Rule(
    r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$",
    "must be a domain name such as example.com",
)


class Model(Trimmed):
    """A request model: strings are checked as sent, then trimmed (web/kernel/wire.py)."""

    model_config = ConfigDict(extra="ignore")


class Out(BaseModel):
    """A response body."""


class LoginBody(BaseModel):
    """Credentials are taken as typed: a password's spaces are part of it."""

    model_config = ConfigDict(extra="ignore")
    email: Text = Field(min_length=1, max_length=320, description="The person's email address.")
    password: Text = Field(min_length=1, max_length=1024)
    organisation: str | None = Field(
        default=None,
        max_length=200,
        description="The organisation to sign in to; needed only when the address belongs to several.",
    )


class RefreshBody(Model):
    refreshToken: Text = Field(min_length=1, max_length=200)


class LogoutBody(Model):
    refreshToken: Text | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="The session's refresh token; without it, the access token sent as Bearer is used.",
    )


class SignedInUser(Exact):
    id: str
    email: str
    organisation: str
    organisationId: str


class TokenPair(Exact):
    accessToken: str = Field(description="A JWT for 'Authorization: Bearer'; short-lived.")
    tokenType: Literal["Bearer"]
    expiresIn: int = Field(description="Seconds the access token lives.")
    refreshToken: str = Field(description="Opaque; buys the next pair once (POST /api/auth/refresh).")
    refreshExpiresIn: int = Field(description="Seconds the refresh token lives unless used.")
    scopes: list[str]
    user: SignedInUser

    @classmethod
    def of(cls, pair: user_sessions.TokenPair) -> TokenPair:
        user, org = pair.user, pair.organisation
        return cls(
            accessToken=pair.access_token,
            tokenType=pair.token_type,  # type: ignore[arg-type]  # user_sessions.TOKEN_TYPE
            expiresIn=pair.expires_in,
            refreshToken=pair.refresh_token,
            refreshExpiresIn=pair.refresh_expires_in,
            scopes=pair.scopes,
            user=SignedInUser(id=user.id, email=user.email, organisation=org.name, organisationId=org.id),
        )


class LoggedOut(Exact):
    loggedOut: Literal[True]
    sessionId: str

    @classmethod
    def of(cls, session_id: str) -> LoggedOut:
        return cls(loggedOut=True, sessionId=session_id)


class DocumentListQuery(Model):
    tag: str | None = Field(default=None, max_length=64, description="Only documents with this tag.")
    page: int = Field(default=1, ge=1, le=100_000, description="Page number, from 1.")
    pageSize: int = Field(default=20, ge=1, le=100, description="Documents per page, 1 to 100 (default 20).")


class DocumentSummary(Out):
    id: str
    title: str
    status: DocumentStatusField
    createdAt: Timestamp
    updatedAt: Timestamp
    tags: list[str]
    format: Literal["docx", "pdf", "html", "markdown", "text"]
    mediaType: str
    sizeBytes: int
    version: int
    approvalPolicy: ApprovalPolicy = Field(description=APPROVAL_POLICY_TEXT)
    allowSelfApproval: bool = Field(description=SELF_APPROVAL_TEXT)
    error: str | None = Field(default=None, description="Why the conversion failed (status failed only)")

    @staticmethod
    def answer(doc: document_models.Document) -> dict[str, Any]:
        """The document by wire name. A dict: `error` is there only on a failed document, where a model
        instance would write it as null on every other one."""
        approval = policies.of(doc)
        out: dict[str, Any] = {
            "id": doc.id,
            "title": doc.title,
            "status": doc.status,
            "createdAt": iso(doc.created_at),
            "updatedAt": iso(doc.updated_at),
            "tags": list(doc.tags or []),
            "format": doc.kind,
            "mediaType": doc.media_type,
            "sizeBytes": doc.size_bytes,
            "version": doc.version,
            "approvalPolicy": approval.policy.value,
            "allowSelfApproval": approval.allow_self_approval,
        }
        if doc.status == document_models.DocumentStatus.FAILED:
            out["error"] = doc.error
        return out


class UploadForm(Model):
    """The upload's approval fields (form fields, read as text: allowSelfApproval is true or false)."""

    approvalPolicy: ApprovalPolicy = Field(
        default=ApprovalPolicy.CONCORD_DEFAULT, description=APPROVAL_POLICY_TEXT
    )
    allowSelfApproval: bool = Field(default=False, description=SELF_APPROVAL_TEXT)


class DocumentApprovalBody(Model):
    """Either field, or both; one left out (or null) keeps its value."""

    approvalPolicy: ApprovalPolicy | None = Field(default=None, description=APPROVAL_POLICY_TEXT)
    allowSelfApproval: bool | None = Field(default=None, description=SELF_APPROVAL_TEXT)


class DocumentList(Out):
    data: list[DocumentSummary]
    total: int
    page: int
    pageSize: int

    @staticmethod
    def answer(found: library.DocumentPage) -> dict[str, Any]:
        return {
            "data": [DocumentSummary.answer(d) for d in found.rows],
            "total": found.total,
            "page": found.page,
            "pageSize": found.page_size,
        }


class CommentCounts(Out):
    total: int
    resolved: int


class DocumentMetadata(DocumentSummary):
    reviewers: int
    comments: CommentCounts

    @staticmethod
    def of_metadata(m: library.Metadata) -> dict[str, Any]:
        return {
            **DocumentSummary.answer(m.doc),
            "reviewers": m.reviewers,
            "comments": {"total": m.comments_total, "resolved": m.comments_resolved},
        }


Permission = Annotated[sharing.Permission, SpeltOut(sharing.Permission)]
AccessMode = Annotated[sharing.AccessMode, SpeltOut(sharing.AccessMode)]


# What each access mode needs and refuses of reviewerEmails and allowedDomain (the model checks it, the
# schema below states it).
SHARE_MODES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "open": ((), ("reviewerEmails", "allowedDomain")),
    "closed-individual": (("reviewerEmails",), ("allowedDomain",)),
    "closed-org": (("allowedDomain",), ()),
}


def _mode_branch(mode: str, needs: tuple[str, ...], refuses: tuple[str, ...]) -> dict[str, Any]:
    """The JSON Schema of one access mode: what it needs present and what it refuses."""
    present = {"reviewerEmails": {"type": "array", "minItems": 1}, "allowedDomain": {"type": "string"}}
    absent = {"reviewerEmails": {"type": "array", "maxItems": 0}, "allowedDomain": {"type": "null"}}
    return {
        "properties": {
            "accessMode": {"const": mode},
            **{name: present[name] for name in needs},
            **{name: absent[name] for name in refuses},
        },
        # open is the default: its branch holds when accessMode is left out.
        "required": [*needs] if mode == "open" else ["accessMode", *needs],
    }


class ShareLinkBody(Model):
    """The access modes' rules are checked here and stated as one schema branch each; that a closed-org
    link's reviewerEmails are at its allowedDomain is checked too, which no schema can state."""

    model_config = ConfigDict(
        json_schema_extra={"anyOf": [_mode_branch(m, *rules) for m, rules in SHARE_MODES.items()]}
    )
    permission: Permission = sharing.Permission.READ_ONLY
    accessMode: AccessMode = sharing.AccessMode.OPEN
    public: bool = False
    reviewerEmails: list[Annotated[str, EMAIL, Field(max_length=254)]] = Field(
        default_factory=list,
        validate_default=True,
        max_length=200,
        description="closed-individual: who may review (required); closed-org: optionally, who of the "
        "domain may (each at allowedDomain); open: none.",
    )
    allowedDomain: Annotated[str, DOMAIN] | None = Field(
        default=None,
        validate_default=True,
        max_length=253,
        description="closed-org (required): the addresses' domain.",
    )
    expiresInHours: int = Field(
        default=168, ge=1, le=24 * 365, description="Lifetime of the link in hours (default 7 days)."
    )

    @field_validator("reviewerEmails", "allowedDomain")
    @classmethod
    def _mode(cls, value: Any, info: ValidationInfo) -> Any:
        # Fields are validated in order: accessMode (and reviewerEmails for allowedDomain) are known here.
        mode = info.data.get("accessMode")
        if mode is None:
            return value  # accessMode itself was refused
        name = info.field_name or ""
        needs, refuses = SHARE_MODES[mode]
        if name in needs and not value:
            raise PydanticCustomError("access_mode", f"accessMode {mode} needs {name}")
        if name in refuses and value:
            raise PydanticCustomError("access_mode", f"accessMode {mode} takes no {name}")
        if name == "allowedDomain" and value:
            outside = [
                e
                for e in info.data.get("reviewerEmails") or []
                if not e.lower().endswith("@" + value.lower())
            ]
            if outside:
                raise PydanticCustomError(
                    "access_mode", f"reviewerEmails outside {value.lower()}: {', '.join(outside)}"
                )
        return value


class ShareLink(Out):
    id: str
    documentId: str
    permission: Permission
    accessMode: AccessMode
    public: bool
    reviewerEmails: list[str]
    allowedDomain: str | None
    expiresAt: Timestamp

    @staticmethod
    def terms(link: document_models.ShareLink) -> dict[str, Any]:
        """The link's terms by wire name (the answers below extend them, in this order)."""
        return {
            "id": link.id,
            "documentId": link.document_id,
            "permission": link.permission,
            "accessMode": link.access_mode,
            "public": link.public,
            "reviewerEmails": list(link.reviewer_emails or []),
            "allowedDomain": link.allowed_domain,
            "expiresAt": iso(link.expires_at),
        }


class ShareLinkOut(ShareLink):
    token: str = Field(description="Shown once")
    url: str = Field(description="The review link")

    @staticmethod
    def answer(made: sharing.Created) -> dict[str, Any]:
        return {
            "token": made.token,
            "url": made.url,
            "expiresAt": iso(made.link.expires_at),
            **ShareLink.terms(made.link),
        }


class ShareLinkLookup(ShareLink):
    title: str
    status: DocumentStatusField

    @staticmethod
    def answer(link: document_models.ShareLink, doc: document_models.Document) -> dict[str, Any]:
        """What any holder of the token may know: the reviewer list stays with the owner."""
        return {**ShareLink.terms(link), "reviewerEmails": [], "title": doc.title, "status": doc.status}


class CommentBody(Model):
    documentId: Text = Field(min_length=1, max_length=36)
    text: Text = Field(min_length=1, max_length=10_000)
    paragraphId: str | None = Field(default=None, max_length=256)
    author: str | None = Field(default=None, max_length=200, description="Display name; default: the key's.")


class CommentSearchQuery(Model):
    documentId: str | None = Field(default=None, max_length=36)
    resolved: bool | None = None
    author: str | None = Field(default=None, max_length=200, description="Exact author name.")
    page: int = Field(default=1, ge=1, le=100_000)
    pageSize: int = Field(default=50, ge=1, le=200)


class CommentOut(Out):
    id: str
    documentId: str
    text: str
    author: str
    paragraphId: str | None
    resolved: bool
    createdAt: Timestamp
    resolvedAt: Timestamp | None

    @classmethod
    def of(cls, c: document_models.Comment) -> CommentOut:
        return cls(
            id=c.id,
            documentId=c.document_id,
            text=c.text,
            author=c.author,
            paragraphId=c.paragraph_id,
            resolved=c.resolved,
            createdAt=iso(c.created_at),
            resolvedAt=iso(c.resolved_at),
        )


class CommentList(Out):
    data: list[CommentOut]
    total: int
    page: int
    pageSize: int

    @classmethod
    def of(cls, found: comments.CommentPage) -> CommentList:
        return cls(
            data=[CommentOut.of(c) for c in found.rows],
            total=found.total,
            page=found.page,
            pageSize=found.page_size,
        )


Role = Annotated[DocumentRole, SpeltOut(DocumentRole)]
Capability = Annotated[membership.Capability, SpeltOut(membership.Capability)]


class JoinBody(Model):
    agentName: Annotated[str, HAS_LETTER_OR_DIGIT] = Field(
        min_length=1, max_length=128, description="Display name on this document; a letter or digit."
    )
    role: Role = DocumentRole.EDITOR
    capabilities: list[Capability] | None = Field(
        default=None,
        max_length=20,
        description="The consensus acts to take: propose, vote. Omitted: all the role allows (editor and "
        "reviewer: both; observer: none); asking for one the role does not allow is a 400.",
    )
    inviteToken: str | None = Field(default=None, max_length=200)
    contact: ContactIn | None = Field(
        default=None,
        description="Where a person reaches the agent's operator (shown within its organisation).",
    )

    @field_validator("capabilities")
    @classmethod
    def _role_allows(cls, value: list[str] | None, info: ValidationInfo) -> list[str] | None:
        role = info.data.get("role")
        allowed = ROLE_CAPABILITIES.get(role or "", ())
        refused = [c for c in value or [] if c not in allowed]
        if role is not None and refused:
            may = ", ".join(allowed) or "none"
            raise PydanticCustomError(
                "role_capabilities",
                f"role {role} may not {' or '.join(refused)}; it may have {may} (omit capabilities to get "
                "the role's)",
            )
        return value

    def request(self) -> tap.JoinRequest:
        """What the join asks the domain for."""
        return tap.JoinRequest(
            self.agentName,
            role=self.role,
            capabilities=self.capabilities,
            invite_token=self.inviteToken,
            contact=self.contact.kept() if self.contact else None,
        )


def role_limits(limits: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    """JSON Schema stating each role's limit on `capabilities` (if role is R, capabilities within R's)."""
    return {
        "allOf": [
            {
                "if": {"properties": {"role": {"const": role}}, "required": ["role"]},
                "then": {
                    "properties": {
                        "capabilities": {
                            "anyOf": [
                                {"type": "array", "items": {"enum": list(allowed)}}
                                if allowed
                                else {"type": "array", "maxItems": 0},
                                {"type": "null"},
                            ]
                        }
                    }
                },
            }
            for role, allowed in limits.items()
        ]
    }


class JoinRequest(JoinBody):
    """JoinBody as /openapi.json documents it: the roles' limits on capabilities stated too (an MCP tool's
    arguments take JoinBody, whose schema stays a plain object)."""

    model_config = ConfigDict(json_schema_extra=role_limits(ROLE_CAPABILITIES))


class LeaveBody(Model):
    agentId: str | None = Field(default=None, max_length=36)


class RemoveAgentBody(Model):
    reason: Text | None = Field(
        default=None,
        max_length=2_000,
        description="Why the agent is removed (kept in the event and the audit)",
    )


class ProposalBody(Model):
    sectionId: Text = Field(min_length=1, max_length=256)
    content: str = Field(max_length=50_000)
    summary: Text = Field(min_length=1, max_length=2_000)
    ttlSeconds: int | None = Field(default=None, ge=30, le=86_400)


class ProposalQuery(Model):
    sectionId: str | None = Field(default=None, max_length=256)
    status: ProposalStatus | None = None


class ApproveBody(Model):
    reason: str | None = Field(default=None, max_length=1_000)


class RejectBody(Model):
    reason: Text = Field(min_length=1, max_length=1_000)


class ObjectBody(Model):
    reason: str | None = Field(default=None, max_length=1_000)


class IntentBody(Model):
    sectionId: Text = Field(min_length=1, max_length=256)
    goal: Text = Field(min_length=1, max_length=2_000)
    category: str = Field(default="general", min_length=1, max_length=64)


class ConstraintBody(Model):
    sectionId: Text = Field(min_length=1, max_length=256)
    boundary: Text = Field(min_length=1, max_length=2_000)
    type: records.ConstraintTypeField = records.ConstraintType.MUST_NOT


class SectionQuery(Model):
    sectionId: str | None = Field(default=None, max_length=256)


class ConstraintQuery(SectionQuery, ConstraintStatusQuery):
    pass


class SalienceBody(Model):
    sectionId: Text = Field(min_length=1, max_length=256)
    score: StrictInt = Field(ge=0, le=10, description="0 (not relevant) to 10 (critical).")


class LockBody(Model):
    ttlSeconds: int = Field(default=300, ge=1, le=3_600, description="Lock lifetime (default 300 s).")


class EscalateBody(Model):
    """The text for the reviewers is `question` or `message` (one is required; both only if equal)."""

    model_config = ConfigDict(json_schema_extra=ONE_OF_QUESTION_MESSAGE)
    question: Text | None = Field(
        default=None, min_length=1, max_length=5_000, description="The question for human reviewers."
    )
    message: Text | None = Field(
        default=None,
        min_length=1,
        max_length=5_000,
        description="The same as question (the PACT CLI's name).",
    )
    sectionId: str | None = Field(default=None, max_length=256)
    proposalId: str | None = Field(default=None, max_length=36)
    priority: DocumentPriorityIn = Field(
        default=EscalationPriority.MEDIUM, description="low, medium (also spelled normal) or high"
    )


# --- agents on a document ----------------------------------------------------------------------------


class DocumentAgent(Out):
    agentId: str
    agentName: str
    role: Role
    capabilities: list[Capability] = Field(description="What this agent may do of propose and vote")
    status: str
    isActive: bool
    joinedAt: Timestamp
    leftAt: Timestamp | None

    @classmethod
    def of(cls, a: document_models.DocumentAgent) -> DocumentAgent:
        return cls(**_agent_fields(a))


def _agent_fields(a: document_models.DocumentAgent) -> dict[str, Any]:
    return {
        "agentId": a.id,
        "agentName": a.agent_name,
        "role": DocumentRole(a.role),
        "capabilities": [membership.Capability(c) for c in membership.capabilities(a)],
        "status": a.status,
        "isActive": a.status == "active",
        "joinedAt": iso(a.joined_at),
        "leftAt": iso(a.left_at),
    }


class Joined(DocumentAgent):
    documentId: str
    registrationId: str = Field(description="The same as agentId")

    @classmethod
    def of(cls, a: document_models.DocumentAgent) -> Joined:
        return cls(**_agent_fields(a), documentId=a.document_id, registrationId=a.id)


class Left(Out):
    success: bool
    agentId: str
    leftAt: Timestamp
    locksReleased: int
    keyRevoked: bool = Field(
        description="True when the key was minted by an invite for this document: it is revoked as its agent "
        "leaves, so coming back takes a new invite"
    )

    @classmethod
    def of(cls, d: Departure) -> Left:
        return cls(
            success=True,
            agentId=d.agent_id,
            leftAt=iso(d.left_at),
            locksReleased=d.locks_released,
            keyRevoked=d.key_revoked,
        )


class Removed(Left):
    removedBy: str = Field(
        description="Who removed the agent: the person, or the organisation's key, by name"
    )
    reason: str | None

    @classmethod
    def of(cls, d: Departure) -> Removed:
        return cls(**Left.of(d).model_dump(), removedBy=d.removed_by or "", reason=d.reason)


class DocumentAgents(Out):
    agents: list[DocumentAgent]

    @classmethod
    def of(cls, rows: list[document_models.DocumentAgent]) -> DocumentAgents:
        return cls(agents=[DocumentAgent.of(a) for a in rows])


class DocumentAgentList(RootModel[list[DocumentAgent]]):
    """The active agents as a bare array: what the PACT CLI's `agents` reads on /api/pact/{docId}/agents
    (/api/tap/{docId}/agents keeps the spec's object)."""

    @classmethod
    def of(cls, rows: list[document_models.DocumentAgent]) -> DocumentAgentList:
        return cls([DocumentAgent.of(a) for a in rows])


class DoneBody(Model):
    status: CompletionStatus = Field(description=STATUS_TEXT)
    summary: str | None = Field(default=None, max_length=SUMMARY_MAX, description=SUMMARY_TEXT)


class DocumentDone(DoneOut):
    documentId: str

    @classmethod
    def of(cls, done: completions.Signal) -> DocumentDone:
        return cls(**DoneOut.fields(done), documentId=done.resource_id)


class DocumentContent(Out):
    documentId: str
    format: Literal["markdown"]
    content: str
    version: int
    updatedAt: Timestamp

    @staticmethod
    def answer(c: tap.Content) -> dict[str, Any]:
        return {
            "documentId": c.document_id,
            "format": "markdown",
            "content": c.content,
            "version": c.version,
            "updatedAt": iso(c.updated_at),
        }


class Section(Out):
    sectionId: str = Field(description="sec: + heading slugs joined by ':'")
    title: str
    heading: str
    level: int
    parentId: str | None = Field(
        default=None,
        description="Paged reads only, on a page's top nodes: the parent section (on an earlier page), null "
        "for a top-level section",
    )
    children: list[Section]

    @staticmethod
    def node(sec: sections.Section) -> dict[str, Any]:
        """A section with its children, by wire name (no parentId: the whole tree's nodes)."""
        return {
            "sectionId": sec.id,
            "title": sec.title,
            "heading": sec.title,
            "level": sec.level,
            "children": [Section.node(c) for c in sec.children],
        }


class SectionsQuery(Model):
    limit: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="Sections per page (default and largest 1000). A document with no more sections than "
        "this answers its whole tree, as without paging.",
    )
    cursor: str | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description="The `nextCursor` of the page before: the page starts after that section",
    )


class DocumentSections(Out):
    documentId: str
    sections: list[Section] = Field(
        description="The section tree; in a paged read, this page's sections as a tree (top nodes whose "
        "parent is on an earlier page name it in parentId)"
    )
    total: int | None = Field(default=None, description="Paged reads only: the document's sections in all")
    nextCursor: str | None = Field(
        default=None, description="Paged reads only: send as `cursor` for the next page; null on the last"
    )

    @staticmethod
    def answer(found: tap.SectionTree) -> dict[str, Any]:
        """The whole tree, or a page of it as a tree: a top node of the page names its parentId (null for a
        top-level section, else a section on an earlier page), with total and nextCursor."""
        if not found.page:
            return {"documentId": found.document_id, "sections": [Section.node(s) for s in found.sections]}
        nodes: dict[str, dict[str, Any]] = {}
        top: list[dict[str, Any]] = []
        for sec in found.sections:
            node: dict[str, Any] = {
                "sectionId": sec.id,
                "title": sec.title,
                "heading": sec.title,
                "level": sec.level,
            }
            parent = nodes.get(sec.parent) if sec.parent else None
            if parent is None:
                node["parentId"] = sec.parent
                top.append(node)
            else:
                parent["children"].append(node)
            node["children"] = []
            nodes[sec.id] = node
        return {
            "documentId": found.document_id,
            "sections": top,
            "total": found.total,
            "nextCursor": found.next_cursor,
        }


Vote = VoteKindField


class VoteCounts(Out):
    approve: int
    reject: int
    object: int

    @classmethod
    def of(cls, p: consensus_models.Proposal) -> VoteCounts:
        return cls(approve=p.approve_count, reject=p.reject_count, object=p.object_count)


class Proposal(Out):
    proposalId: str
    sectionId: str
    agentId: str
    agentName: str
    summary: str
    content: str
    status: ProposalStatus
    votes: VoteCounts
    ttlSeconds: int
    createdAt: Timestamp
    expiresAt: Timestamp
    resolvedAt: Timestamp | None

    @classmethod
    def of(cls, p: consensus_models.Proposal) -> Proposal:
        return cls(
            proposalId=p.id,
            sectionId=p.section_id,
            agentId=p.author_id,
            agentName=p.author_name,
            summary=p.summary,
            content=p.new_content,
            status=ProposalStatus(p.status),
            votes=VoteCounts.of(p),
            ttlSeconds=p.ttl_seconds,
            createdAt=iso(p.created_at),
            expiresAt=iso(p.expires_at),
            resolvedAt=iso(p.resolved_at),
        )


class ProposalList(Out):
    proposals: list[Proposal] = Field(description="Oldest first")
    total: int

    @classmethod
    def of(cls, rows: list[consensus_models.Proposal]) -> ProposalList:
        return cls(proposals=[Proposal.of(p) for p in rows], total=len(rows))


class VoteResult(Out):
    proposalId: str
    vote: Vote
    recorded: bool = Field(description="Always true: the vote was recorded (PACT's vote answer)")
    decision: Vote = Field(description="The vote again, under PACT's name")
    votedAt: Timestamp
    status: ProposalStatus = Field(description="The proposal's status after this vote")
    votes: VoteCounts
    requiredApprovals: int

    @classmethod
    def of(cls, cast: engine.VoteCast) -> VoteResult:
        p = cast.proposal
        kind = VoteKind(cast.vote)
        return cls(
            proposalId=p.id,
            vote=kind,
            recorded=True,
            decision=kind,
            votedAt=iso(cast.voted_at),
            status=ProposalStatus(p.status),
            votes=VoteCounts.of(p),
            requiredApprovals=cast.required_approvals,
        )


class Escalation(Out):
    escalationId: str
    status: str
    question: str
    message: str = Field(description="The question again (the hub's and the PACT CLI's name for it)")
    sectionId: str | None
    proposalId: str | None
    priority: Literal[EscalationPriority.LOW, EscalationPriority.MEDIUM, EscalationPriority.HIGH]
    createdAt: Timestamp

    @staticmethod
    def answer(e: escalations.Raised) -> dict[str, Any]:
        return {
            "escalationId": e.id,
            "status": e.status,
            "question": e.message,
            "message": e.message,
            "sectionId": e.section_id,
            "proposalId": e.proposal_id,
            "priority": e.priority,
            "createdAt": iso(e.created_at),
        }


# ---- responses of intents, constraints and salience ------------------------------------------------
# Built from the domain's typed results (the `of` constructors own the wire names of spec/document-api.md).


class IntentOut(Exact, IntentLifecycle):
    intentId: str
    sectionId: str
    goal: str
    category: str
    agentId: str
    agentName: str
    createdAt: str

    @classmethod
    def of(cls, i: records.Intent) -> IntentOut:
        return cls(
            intentId=i.id,
            sectionId=i.section_id,
            goal=i.goal,
            category=i.category,
            agentId=i.agent_id,
            agentName=i.agent_name,
            createdAt=iso(i.created_at),
            **IntentLifecycle.fields_of(i),
        )


class IntentList(Exact):
    intents: list[IntentOut]

    @classmethod
    def of(cls, found: records.Intents) -> IntentList:
        return cls(intents=[IntentOut.of(i) for i in found.items])


class ConstraintOut(Exact, ConstraintWithdrawal):
    constraintId: str
    sectionId: str
    boundary: str
    type: str
    agentId: str
    agentName: str
    createdAt: str

    @classmethod
    def of(cls, c: records.Constraint) -> ConstraintOut:
        return cls(
            constraintId=c.id,
            sectionId=c.section_id,
            boundary=c.boundary,
            type=c.kind,
            agentId=c.agent_id,
            agentName=c.agent_name,
            createdAt=iso(c.created_at),
            **ConstraintWithdrawal.fields_of(c),
        )


class ConstraintList(Exact):
    constraints: list[ConstraintOut]

    @classmethod
    def of(cls, found: records.Constraints) -> ConstraintList:
        return cls(constraints=[ConstraintOut.of(c) for c in found.items])


class SalienceOut(Exact):
    sectionId: str
    agentId: str
    agentName: str
    score: int
    createdAt: str = Field(description="When this agent first scored the section")

    @classmethod
    def of(cls, s: records.Score) -> SalienceOut:
        return cls(
            sectionId=s.section_id,
            agentId=s.agent_id,
            agentName=s.agent_name,
            score=s.score,
            createdAt=iso(s.created_at),
        )


class AgentScore(Exact):
    agentId: str
    agentName: str
    score: int


class SectionSalience(Exact):
    sectionId: str
    scores: list[AgentScore]
    average: float


class SalienceEntry(Exact):
    agentId: str
    agentName: str
    sectionId: str
    score: int


class SalienceMap(Exact):
    salience: list[SectionSalience] = Field(
        description="Each scored section in document order (then sections since removed), scores aggregated"
    )
    entries: list[SalienceEntry] = Field(description="The same scores, one entry per agent and section")

    @classmethod
    def of(cls, m: records.SalienceMap) -> SalienceMap:
        sections: list[SectionSalience] = []
        entries: list[SalienceEntry] = []
        for s in m.sections:
            if s.average is None:  # no scores: the document API lists scored sections only
                continue
            scores = [AgentScore(agentId=x.agent_id, agentName=x.agent_name, score=x.score) for x in s.scores]
            sections.append(SectionSalience(sectionId=s.section_id, scores=scores, average=s.average))
            entries.extend(
                SalienceEntry(
                    agentId=x.agent_id, agentName=x.agent_name, sectionId=x.section_id, score=x.score
                )
                for x in s.scores
            )
        return cls(salience=sections, entries=entries)
