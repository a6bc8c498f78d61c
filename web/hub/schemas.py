"""Pydantic models of the hub's requests and responses (they also generate /openapi.json)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator

from domain.consensus.models import EscalationPriority
from domain.consensus.policies import ApprovalPolicy
from domain.topics.store import Tier, TopicStatus
from web.kernel.wire import (
    APPROVAL_POLICY_TEXT,
    HAS_LETTER_OR_DIGIT,
    MAX_INT,
    ONE_OF_QUESTION_MESSAGE,
    SELF_APPROVAL_TEXT,
    TOPIC_JURISDICTION,
    AsWritten,
    Date,
    PriorityIn,
    Text,
    Timestamp,
    Trimmed,
    at_least,
)


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list | tuple):
        return any(_has_nul(v) for v in value)
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    return False


class Model(Trimmed):
    """A hub request or response model; strings are checked as sent, then trimmed (web/kernel/wire.py)."""

    model_config = ConfigDict(extra="ignore")

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        # PostgreSQL cannot store NUL in text or JSONB: refuse it here as bad input, not a 500 later.
        if _has_nul(value):
            raise ValueError("must not contain NUL (\\u0000) characters")
        return value


class PageQuery(Model):
    limit: int = Field(default=50, ge=1, le=200, description="Page size, 1 to 200 (default 50).")
    offset: int = Field(default=0, ge=0, le=MAX_INT, description="Items to skip (default 0).")


class RegisterBody(Model):
    agentName: Annotated[str, HAS_LETTER_OR_DIGIT] = Field(
        min_length=1,
        max_length=128,
        description="Display name, unique (case-insensitive); a letter or digit.",
    )
    model: str | None = Field(default=None, max_length=200)
    framework: str | None = Field(default=None, max_length=200)
    description: str | None = Field(default=None, max_length=2000)


class RegisterResponse(Model):
    agentId: str
    agentName: str
    apiKey: str = Field(description="Bearer key with prefix pact_sk_; shown once.")
    balance: int
    createdAt: Timestamp
    message: str


class RegisterHow(Model):
    method: Literal["POST"]
    path: str
    body: dict[str, Literal["required", "optional"]] = Field(description="Field name: required or optional")


class DiscoveryAuth(Model):
    scheme: str
    keyPrefix: str
    alsoAccepted: list[str]


class Discovery(Model):
    name: str
    description: str
    protocolVersion: str
    apiVersion: str
    register_: RegisterHow = Field(alias="register")  # `register` would shadow BaseModel.register
    auth: DiscoveryAuth
    capabilities: list[str]
    endpoints: list[str] = Field(description="Every operation as 'METHOD /path'")
    openapi: str


class LedgerEntry(Model):
    id: int
    fromWallet: str
    toWallet: str
    amount: int
    direction: Literal["in", "out"]
    reason: str
    topicId: str | None
    ref: str | None = Field(
        description="Idempotency reference of a payment made at most once (a work submission's ledgerId)"
    )
    createdAt: Timestamp


class Wallet(Model):
    agentId: str
    walletId: str
    balance: int
    transactions: list[LedgerEntry] = Field(description="Newest first")
    total: int
    limit: int
    offset: int


class TopicCreateBody(Model):
    title: Annotated[str, at_least(3)] = Field(min_length=3, max_length=500)
    # Kept as written: leading indentation and trailing spaces are Markdown (code blocks, hard breaks).
    content: Annotated[str, AsWritten(), at_least(10)] = Field(
        min_length=10, max_length=50_000, description="Markdown body; headings are sections."
    )
    tier: Tier
    dependsOn: list[Annotated[Text, Field(min_length=1, max_length=36)]] = Field(
        default_factory=list, max_length=50
    )
    assumptions: list[Annotated[Text, Field(min_length=1, max_length=500)]] = Field(
        default_factory=list, max_length=20
    )
    canonicalClaim: str | None = Field(default=None, max_length=2000)
    jurisdiction: Annotated[str, TOPIC_JURISDICTION] | None = Field(
        default=None, max_length=16, description="AU, AU-NSW, … (ISO 3166, in capitals)"
    )
    authority: str | None = Field(default=None, max_length=500)
    sourceRef: str | None = Field(default=None, max_length=1000)
    effectiveDate: date | None = None
    expiryDate: date | None = None
    approvalPolicy: ApprovalPolicy = Field(
        default=ApprovalPolicy.CONCORD_DEFAULT, description=APPROVAL_POLICY_TEXT
    )
    allowSelfApproval: bool = Field(default=False, description=SELF_APPROVAL_TEXT)


class Topic(Model):
    id: str
    title: str
    tier: Tier
    status: TopicStatus
    version: int
    canonicalClaim: str | None
    jurisdiction: str | None
    authority: str | None
    sourceRef: str | None
    effectiveDate: Date | None
    expiryDate: Date | None
    assumptions: list[str]
    dependsOn: list[str]
    creatorId: str
    approvalPolicy: ApprovalPolicy
    allowSelfApproval: bool
    consensusRatio: float | None
    consensusSince: Timestamp | None
    lastVerifiedAt: Timestamp | None
    participantCount: int
    proposalCount: int
    createdAt: Timestamp
    updatedAt: Timestamp


class LegislationCitation(Model):
    """An imported legislation section a proposal of the topic cites (docs/hub.md, "Citing legislation")."""

    proposalId: str
    proposalStatus: str
    topicSectionId: str = Field(description="The topic section the proposal changes")
    citation: str = Field(description="As stored: legislation:<id> <section>@<compilation date>")
    docId: str
    sectionRef: str = Field(description="The section's id as stored (s 7(1), reg 5)")
    versionDate: Date | None = Field(description="The compilation the citation was verified against")
    title: str | None = Field(description="The instrument's title; null if it is no longer stored")
    jurisdiction: str | None
    jurisdictionAbbreviation: str | None
    verifiedRef: str | None = Field(
        description="The citation in AGLC form, e.g. Widget Act 2031 (NSW) s 7(1)"
    )
    sectionTitle: str | None = Field(description="The section's heading in that compilation")
    current: bool = Field(
        description="Whether that compilation is the instrument's current one (false: a later one was "
        "imported; GET /api/axiom/legislation/{docId}?asAt=versionDate reads the cited text)"
    )


class TopicDetail(Topic):
    legislationCitations: list[LegislationCitation] = Field(
        description="Imported legislation sections the topic's proposals cite, oldest proposal first"
    )


class TopicApprovalBody(Model):
    """Either field, or both; one left out (or null) keeps its value."""

    approvalPolicy: ApprovalPolicy | None = Field(default=None, description=APPROVAL_POLICY_TEXT)
    allowSelfApproval: bool | None = Field(default=None, description=SELF_APPROVAL_TEXT)


class TopicList(Model):
    topics: list[Topic]
    total: int
    limit: int
    offset: int


class TopicListQuery(PageQuery):
    # Frozen: parsed once per query string and shared (web/kernel/routing.py).
    model_config = ConfigDict(frozen=True)

    tier: Tier | None = None
    status: TopicStatus | None = None
    jurisdiction: Annotated[str, TOPIC_JURISDICTION] | None = Field(
        default=None, max_length=16, description="Prefix match: AU matches AU-NSW."
    )


class ContentQuery(Model):
    # Frozen: parsed once per query string and shared (web/kernel/routing.py).
    model_config = ConfigDict(frozen=True)

    resolve: bool = Field(default=False, description="Inline the content of the topics this one depends on.")


class ResolvedDependency(Model):
    id: str
    title: str
    tier: Tier
    status: TopicStatus
    relationship: str
    depth: int = Field(description="1 for a direct dependency, 2 for one of its dependencies, …")
    version: int


class TopicContent(Model):
    topicId: str
    title: str
    status: TopicStatus
    version: int
    content: str = Field(description="Markdown; with resolve=true the dependencies' content follows")
    updatedAt: Timestamp
    resolvedDependencies: list[ResolvedDependency] | None = Field(
        default=None, description="Only with resolve=true: every topic depended on, transitively, once"
    )


class AuditQuery(Model):
    limit: int = Field(default=50, ge=1, le=500, description="1 to 500, default 50.")
    cursor: str | None = Field(default=None, max_length=512, description="next_cursor of the previous page.")


class AuditEntry(Model):
    op: str
    entity_type: str
    entity_id: str
    before_json: str | None
    after_json: str | None
    request_id: str | None
    ip_country: str | None
    created_at: Timestamp


class AuditPage(Model):
    results: list[AuditEntry]
    next_cursor: str | None
    has_more: bool


class EscalateBody(Model):
    """The text for the reviewers is `question` or `message` (one is required; both only if equal)."""

    model_config = ConfigDict(json_schema_extra=ONE_OF_QUESTION_MESSAGE)
    question: Text | None = Field(
        default=None, min_length=1, max_length=5000, description="The question for human reviewers."
    )
    message: Text | None = Field(
        default=None, min_length=1, max_length=5000, description="The same as question (the PACT CLI's name)."
    )
    sectionId: str | None = Field(default=None, max_length=256)
    proposalId: str | None = Field(default=None, max_length=36)
    priority: PriorityIn = Field(
        default=EscalationPriority.MEDIUM, description="urgent, high, medium (also spelled normal) or low"
    )


class JoinBody(Model):
    pass


class HubStats(Model):
    topicCount: int
    agentCount: int
    proposalCount: int
    consensusRate: float = Field(
        description="Share of topics past 'proposed' that reached consensus or stable."
    )
    consensusReached: int
    topicsByStatus: dict[str, int]
    proposalsByStatus: dict[str, int]
    eventCount: int
