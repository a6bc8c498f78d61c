"""Pydantic models of the document API's requests and responses (they also build /openapi.json; the
tests check every real response body against the response models)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from domain.consensus import records
from domain.kernel.clock import iso
from web.kernel.wire import MAX_INT, ONE_OF_QUESTION_MESSAGE, Exact, Timestamp


class Model(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


class Out(BaseModel):
    """A response body."""


class LoginBody(BaseModel):
    """Credentials are taken as typed: a password's spaces are part of it."""

    model_config = ConfigDict(extra="ignore")
    email: str = Field(min_length=1, max_length=320, description="The person's email address.")
    password: str = Field(min_length=1, max_length=1024)
    organisation: str | None = Field(
        default=None,
        max_length=200,
        description="The organisation to sign in to; needed only when the address belongs to several.",
    )


class RefreshBody(Model):
    refreshToken: str = Field(min_length=1, max_length=200)


class LogoutBody(Model):
    refreshToken: str | None = Field(
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


class LoggedOut(Exact):
    loggedOut: Literal[True]
    sessionId: str


class DocumentListQuery(Model):
    tag: str | None = Field(default=None, max_length=64, description="Only documents with this tag.")
    page: int = Field(default=1, ge=1, le=100_000, description="Page number, from 1.")
    pageSize: int = Field(default=20, ge=1, le=100, description="Documents per page, 1 to 100 (default 20).")


class DocumentSummary(Out):
    id: str
    title: str
    status: Literal["processing", "ready", "failed"]
    createdAt: Timestamp
    updatedAt: Timestamp
    tags: list[str]
    format: Literal["docx", "pdf", "html", "markdown", "text"]
    mediaType: str
    sizeBytes: int
    version: int
    error: str | None = Field(default=None, description="Why the conversion failed (status failed only)")


class DocumentList(Out):
    data: list[DocumentSummary]
    total: int
    page: int
    pageSize: int


class CommentCounts(Out):
    total: int
    resolved: int


class DocumentMetadata(DocumentSummary):
    reviewers: int
    comments: CommentCounts


Permission = Literal["ReadOnly", "CommentOnly", "FullReview"]
AccessMode = Literal["open", "closed-individual", "closed-org"]


class ShareLinkBody(Model):
    permission: Permission = "ReadOnly"
    accessMode: AccessMode = "open"
    public: bool = False
    reviewerEmails: list[str] = Field(default_factory=list, max_length=200)
    allowedDomain: str | None = Field(default=None, max_length=253)
    expiresInHours: int = Field(
        default=168, ge=1, le=24 * 365, description="Lifetime of the link in hours (default 7 days)."
    )


class ShareLink(Out):
    id: str
    documentId: str
    permission: Permission
    accessMode: AccessMode
    public: bool
    reviewerEmails: list[str]
    allowedDomain: str | None
    expiresAt: Timestamp


class ShareLinkOut(ShareLink):
    token: str = Field(description="Shown once")
    url: str = Field(description="The review link")


class ShareLinkLookup(ShareLink):
    title: str
    status: Literal["processing", "ready", "failed"]


class CommentBody(Model):
    documentId: str = Field(min_length=1, max_length=36)
    text: str = Field(min_length=1, max_length=10_000)
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


class CommentList(Out):
    data: list[CommentOut]
    total: int
    page: int
    pageSize: int


Role = Literal["editor", "reviewer", "observer"]
Capability = Literal["propose", "vote"]


class JoinBody(Model):
    agentName: str = Field(min_length=1, max_length=128)
    role: Role = "editor"
    capabilities: list[Capability] | None = Field(
        default=None,
        max_length=20,
        description="The consensus acts to take: propose, vote. Omitted: all the role allows (editor and "
        "reviewer: both; observer: none); asking for one the role does not allow is a 400.",
    )
    inviteToken: str | None = Field(default=None, max_length=200)


class LeaveBody(Model):
    agentId: str | None = Field(default=None, max_length=36)


class ProposalBody(Model):
    sectionId: str = Field(min_length=1, max_length=256)
    content: str = Field(max_length=50_000)
    summary: str = Field(min_length=1, max_length=2_000)
    ttlSeconds: int | None = Field(default=None, ge=30, le=86_400)


class ProposalQuery(Model):
    sectionId: str | None = Field(default=None, max_length=256)
    status: str | None = Field(default=None, max_length=16)


class ApproveBody(Model):
    reason: str | None = Field(default=None, max_length=1_000)


class RejectBody(Model):
    reason: str = Field(min_length=1, max_length=1_000)


class ObjectBody(Model):
    reason: str | None = Field(default=None, max_length=1_000)


class IntentBody(Model):
    sectionId: str = Field(min_length=1, max_length=256)
    goal: str = Field(min_length=1, max_length=2_000)
    category: str = Field(default="general", min_length=1, max_length=64)


class ConstraintBody(Model):
    sectionId: str = Field(min_length=1, max_length=256)
    boundary: str = Field(min_length=1, max_length=2_000)
    type: Literal["must", "must_not", "should", "should_not", "prefer"] = "must_not"


class SectionQuery(Model):
    sectionId: str | None = Field(default=None, max_length=256)


class SalienceBody(Model):
    sectionId: str = Field(min_length=1, max_length=256)
    score: StrictInt = Field(ge=0, le=10, description="0 (not relevant) to 10 (critical).")


class LockBody(Model):
    ttlSeconds: int = Field(default=300, ge=1, le=3_600, description="Lock lifetime (default 300 s).")


class EscalateBody(Model):
    """The text for the reviewers is `question` or `message` (one is required; both only if equal)."""

    model_config = ConfigDict(json_schema_extra=ONE_OF_QUESTION_MESSAGE)
    question: str | None = Field(
        default=None, min_length=1, max_length=5_000, description="The question for human reviewers."
    )
    message: str | None = Field(
        default=None,
        min_length=1,
        max_length=5_000,
        description="The same as question (the PACT CLI's name).",
    )
    sectionId: str | None = Field(default=None, max_length=256)
    proposalId: str | None = Field(default=None, max_length=36)
    priority: Literal["low", "medium", "high"] = "medium"


class EventsQuery(Model):
    after: int = Field(default=0, ge=0, le=MAX_INT, description="Return events after this sequence number.")
    limit: int = Field(default=50, ge=1, le=200)


class PollQuery(Model):
    since: str | None = Field(default=None, max_length=40, description="Cursor from the last poll.")
    sectionId: str | None = Field(default=None, max_length=256)
    limit: int = Field(default=50, ge=1, le=200)


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


class Joined(DocumentAgent):
    documentId: str
    registrationId: str = Field(description="The same as agentId")


class Left(Out):
    success: bool
    agentId: str
    leftAt: Timestamp
    locksReleased: int


class DocumentAgents(Out):
    agents: list[DocumentAgent]


class DocumentContent(Out):
    documentId: str
    format: Literal["markdown"]
    content: str
    version: int
    updatedAt: Timestamp


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


ProposalStatus = Literal["pending", "approved", "rejected", "objected", "expired", "superseded"]
Vote = Literal["approve", "reject", "object"]


class VoteCounts(Out):
    approve: int
    reject: int
    object: int


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


class ProposalList(Out):
    proposals: list[Proposal] = Field(description="Oldest first")
    total: int


class VoteResult(Out):
    proposalId: str
    vote: Vote
    votedAt: Timestamp
    status: ProposalStatus = Field(description="The proposal's status after this vote")
    votes: VoteCounts
    requiredApprovals: int


class Lock(Out):
    sectionId: str
    lockedBy: str = Field(description="The holder's agentId")
    lockedByName: str
    ttlSeconds: int
    expiresAt: Timestamp


class Unlocked(Out):
    sectionId: str
    unlocked: bool


class Escalation(Out):
    escalationId: str
    status: str
    question: str
    message: str = Field(description="The question again (the hub's and the PACT CLI's name for it)")
    sectionId: str | None
    proposalId: str | None
    priority: Literal["low", "medium", "high"]
    createdAt: Timestamp


class Event(Out):
    id: int = Field(description="Sequence number in the document's stream")
    sequenceNumber: int
    type: str
    agentId: str | None
    agentName: str | None
    actorKind: str
    sectionId: str | None
    data: dict[str, Any]
    createdAt: Timestamp


class EventPage(Out):
    events: list[Event]
    nextCursor: str = Field(description="Send as `after` for the next page")
    hasMore: bool


class Change(Out):
    type: str
    agent: str | None = Field(description="The agent's name")
    agentId: str | None
    section: str | None
    cursor: str
    data: dict[str, Any]
    createdAt: Timestamp


class Poll(Out):
    since: str
    changes: list[Change]
    cursor: str = Field(description="Send as `since` on the next poll")
    hasMore: bool


# ---- responses of intents, constraints and salience ------------------------------------------------
# Built from the domain's typed results (the `of` constructors own the wire names of spec/document-api.md).


class IntentOut(Exact):
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
        )


class IntentList(Exact):
    intents: list[IntentOut]

    @classmethod
    def of(cls, found: records.Intents) -> IntentList:
        return cls(intents=[IntentOut.of(i) for i in found.items])


class ConstraintOut(Exact):
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
