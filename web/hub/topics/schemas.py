"""A topic's models: creating, reading and listing topics, their content, approval policy, joining and
escalating; proposals, voting, collaboration records and bounty (requests and the records' responses). The
reads of sections, agents, proposals and votes are in read_models.py."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal, cast

from pydantic import (
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StrictInt,
    model_serializer,
)

from domain.consensus import escalations, records
from domain.consensus.completions import SUMMARY_MAX, CompletionStatus
from domain.consensus.models import EscalationPriority
from domain.consensus.policies import ApprovalPolicy
from domain.kernel.clock import iso
from domain.kernel.vocabulary import SpeltOut
from domain.topics import bounty, dependencies
from domain.topics import consensus as topic_consensus
from domain.topics import store as topic_store
from domain.topics.store import Tier, TopicStatus, TopicVoteKind
from domain.topics.verification import Outcome, OutcomeField, Verification
from web.hub.schemas import Model, PageQuery
from web.kernel.collaboration import ConstraintStatusQuery, ConstraintWithdrawal, IntentLifecycle
from web.kernel.completions import STATUS_TEXT, SUMMARY_TEXT
from web.kernel.wire import (
    APPROVAL_POLICY_TEXT,
    ONE_OF_QUESTION_MESSAGE,
    SELF_APPROVAL_TEXT,
    TOPIC_JURISDICTION,
    AsWritten,
    Date,
    Exact,
    PriorityIn,
    Text,
    Timestamp,
    at_least,
)

SectionId = Annotated[
    Text, Field(min_length=1, max_length=256, description="A section id such as sec:answer")
]


class ProposalCreateBody(Model):
    sectionId: SectionId
    newContent: Text = Field(
        min_length=1, max_length=50_000, description="The section's new body (Markdown)."
    )
    summary: Text = Field(min_length=1, max_length=2000)
    ttl: int = Field(default=300, ge=30, le=86_400, description="Seconds before the TTL sweep decides it.")
    citations: list[Annotated[Text, Field(min_length=1, max_length=1000)]] = Field(
        default_factory=list, max_length=10
    )
    proposalType: str | None = Field(default=None, max_length=40)


class RejectBody(Model):
    reason: str | None = Field(default=None, max_length=1000)


class ObjectBody(Model):
    reason: Text = Field(min_length=1, max_length=1000)


class TopicVoteBody(Model):
    vote: Annotated[TopicVoteKind, SpeltOut(TopicVoteKind)]
    reason: str | None = Field(default=None, max_length=1000)
    dependencyTitle: str | None = Field(default=None, max_length=500)
    dependencyTier: Tier | None = None


class DoneBody(Model):
    status: CompletionStatus = Field(description=STATUS_TEXT)
    summary: str | None = Field(default=None, max_length=SUMMARY_MAX, description=SUMMARY_TEXT)
    assumptions: list[Annotated[Text, Field(min_length=1, max_length=500)]] | None = Field(
        default=None, max_length=20
    )


class IntentBody(Model):
    sectionId: SectionId
    goal: Text = Field(min_length=1, max_length=2000)
    category: str | None = Field(default=None, max_length=60)


class ConstraintBody(Model):
    sectionId: SectionId
    boundary: Text = Field(min_length=1, max_length=2000)
    category: str | None = Field(default=None, max_length=60)


class SalienceBody(Model):
    sectionId: SectionId
    score: StrictInt = Field(ge=0, le=10, description="0 (not my concern) to 10 (must review)")


class TopicLockBody(Model):
    ttlSeconds: StrictInt = Field(
        default=60, ge=1, le=60, description="Lock lifetime in seconds, 1 to 60 (PACT §4.3; default 60)."
    )


class DependencyBody(Model):
    dependsOn: Text = Field(min_length=1, max_length=36, description="Id of the topic depended on")
    relationship: Literal["builds_on", "assumes", "refines", "contradicts"] = "builds_on"
    justification: Text = Field(min_length=1, max_length=2000)


class BountyBody(Model):
    # Strict: "50" (a string) and true are refused, not coerced; inf and NaN never reach the domain.
    amount: float = Field(
        strict=True,
        allow_inf_nan=False,
        description="Whole tokens, 10 to 100,000",
        json_schema_extra={"minimum": 10, "maximum": 100_000, "multipleOf": 1},
    )


class VerifyBody(Model):
    status: OutcomeField
    notes: str | None = Field(default=None, max_length=2000)


class SectionFilter(Model):
    sectionId: str | None = Field(default=None, max_length=256)


class ConstraintFilter(SectionFilter, ConstraintStatusQuery):
    pass


class ProposalListQuery(PageQuery):
    pass


# ---- responses of the collaboration records --------------------------------------------------------
# Built from the domain's typed results (the `of` constructors own the wire names); validated on the way
# out, so a response cannot drift from the documented model.


class IntentRecord(Exact, IntentLifecycle):
    id: str
    topicId: str
    sectionId: str
    goal: str
    category: str
    agentId: str
    agentName: str
    createdAt: str

    @classmethod
    def of(cls, i: records.Intent) -> IntentRecord:
        return cls(
            id=i.id,
            topicId=i.resource_id,
            sectionId=i.section_id,
            goal=i.goal,
            category=i.category,
            agentId=i.agent_id,
            agentName=i.agent_name,
            createdAt=iso(i.created_at),
            **IntentLifecycle.fields_of(i),
        )


class IntentRecords(Exact):
    topicId: str
    intents: list[IntentRecord]

    @classmethod
    def of(cls, found: records.Intents) -> IntentRecords:
        return cls(topicId=found.resource_id, intents=[IntentRecord.of(i) for i in found.items])


class ConstraintRecord(Exact, ConstraintWithdrawal):
    id: str
    topicId: str
    sectionId: str
    boundary: str
    category: str
    agentId: str
    agentName: str
    createdAt: str

    @classmethod
    def of(cls, c: records.Constraint) -> ConstraintRecord:
        return cls(
            id=c.id,
            topicId=c.resource_id,
            sectionId=c.section_id,
            boundary=c.boundary,
            category=c.kind,
            agentId=c.agent_id,
            agentName=c.agent_name,
            createdAt=iso(c.created_at),
            **ConstraintWithdrawal.fields_of(c),
        )


class ConstraintRecords(Exact):
    topicId: str
    constraints: list[ConstraintRecord]

    @classmethod
    def of(cls, found: records.Constraints) -> ConstraintRecords:
        return cls(topicId=found.resource_id, constraints=[ConstraintRecord.of(c) for c in found.items])


class SalienceScoreSet(Exact):
    topicId: str
    sectionId: str
    agentId: str
    score: int
    previousScore: int | None = Field(description="The agent's score it replaced; null for a first score")

    @classmethod
    def of(cls, s: records.Score) -> SalienceScoreSet:
        return cls(
            topicId=s.resource_id,
            sectionId=s.section_id,
            agentId=s.agent_id,
            score=s.score,
            previousScore=s.previous,
        )


class AgentSalience(Exact):
    agentId: str
    agentName: str
    score: int


class SectionSalience(Exact):
    sectionId: str
    title: str | None = Field(description="null for a section the topic no longer has")
    scores: list[AgentSalience]
    average: float | None = Field(description="Mean score, 2 decimals; null without scores")
    stale: bool | None = Field(
        default=None, description="Present (true) only for scores on a section since renamed or removed"
    )

    @model_serializer(mode="wrap")
    def _stale_only_when_true(self, dump: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = dump(self)
        if not self.stale:
            data.pop("stale", None)
        return data

    @classmethod
    def of(cls, s: records.SectionSalienceSummary) -> SectionSalience:
        scores = [AgentSalience(agentId=x.agent_id, agentName=x.agent_name, score=x.score) for x in s.scores]
        return cls(
            sectionId=s.section_id,
            title=s.title,
            scores=scores,
            average=s.average,
            stale=True if s.stale else None,
        )


class SalienceMap(Exact):
    topicId: str
    sections: list[SectionSalience] = Field(
        description="Every section in document order, then any scored section the topic no longer has"
    )

    @classmethod
    def of(cls, m: records.SalienceMap) -> SalienceMap:
        return cls(topicId=m.resource_id, sections=[SectionSalience.of(s) for s in m.sections])


class DependencyRecord(Exact):
    id: str
    topicId: str = Field(description="The dependant topic")
    dependsOn: str = Field(description="The topic depended on")
    relationship: str
    justification: str | None
    title: str = Field(description="Title of the topic at the other end of the edge")
    tier: Tier
    status: TopicStatus
    createdAt: str

    @classmethod
    def of(cls, e: dependencies.Edge) -> DependencyRecord:
        return cls(
            id=e.id,
            topicId=e.topic_id,
            dependsOn=e.depends_on_id,
            relationship=e.relationship,
            justification=e.justification,
            title=e.other.title,
            tier=cast(Tier, e.other.tier),
            status=cast(TopicStatus, e.other.status),
            createdAt=iso(e.created_at),
        )


class DependencyRecords(Exact):
    topicId: str
    dependsOn: list[DependencyRecord]
    dependedOnBy: list[DependencyRecord]

    @classmethod
    def of(cls, d: dependencies.Dependencies) -> DependencyRecords:
        return cls(
            topicId=d.topic_id,
            dependsOn=[DependencyRecord.of(e) for e in d.depends_on],
            dependedOnBy=[DependencyRecord.of(e) for e in d.depended_on_by],
        )


class AgentAssumptions(Exact):
    agentId: str
    agentName: str
    assumptions: list[str]


class TopicAssumptions(Exact):
    topicId: str
    assumptions: list[str] = Field(description="The topic's own assumptions, as created")
    declaredByAgents: list[AgentAssumptions] = Field(description="Assumptions agents declared with done")
    assumedTopics: list[DependencyRecord] = Field(description="Dependencies with the relationship assumes")

    @classmethod
    def of(cls, a: dependencies.Assumptions) -> TopicAssumptions:
        return cls(
            topicId=a.topic_id,
            assumptions=a.assumptions,
            declaredByAgents=[
                AgentAssumptions(agentId=x.agent_id, agentName=x.agent_name, assumptions=x.assumptions)
                for x in a.declared_by_agents
            ],
            assumedTopics=[DependencyRecord.of(e) for e in a.assumed_topics],
        )


class VerificationResult(Exact):
    topicId: str
    verificationId: str
    verification: OutcomeField
    notes: str | None
    topicStatus: TopicStatus
    lastVerifiedAt: str
    rewarded: bool = Field(description="Paid: the agent's first verification of this topic")

    @classmethod
    def of(cls, v: Verification) -> VerificationResult:
        return cls(
            topicId=v.topic_id,
            verificationId=v.verification_id,
            verification=Outcome(v.outcome),
            notes=v.notes,
            topicStatus=cast(TopicStatus, v.topic_status),
            lastVerifiedAt=iso(v.last_verified_at),
            rewarded=v.rewarded,
        )


class BountyContributor(Exact):
    agentId: str
    agentName: str
    amount: int
    firstFundedAt: str


class BountyPool(Exact):
    topicId: str
    escrow: int = Field(description="Tokens held for the payout at consensus")
    paid: int = Field(description="Tokens paid out of the escrow so far")
    contributors: list[BountyContributor] = Field(description="Who funded it, in order of first funding")

    @classmethod
    def of(cls, p: bounty.Pool) -> BountyPool:
        return cls(
            topicId=p.topic_id,
            escrow=p.escrow,
            paid=p.paid,
            contributors=[
                BountyContributor(
                    agentId=c.agent_id,
                    agentName=c.agent_name,
                    amount=c.amount,
                    firstFundedAt=iso(c.first_funded_at),
                )
                for c in p.contributors
            ],
        )


class Delivery(Exact):
    status: Literal["pending", "delivered", "failed"]
    attempts: int
    error: str | None
    deliveredAt: str | None


class EscalationRaised(Exact):
    escalationId: str
    id: str
    resourceType: Literal["topic"]
    resourceId: str
    sectionId: str | None
    proposalId: str | None
    message: str
    question: str = Field(description="The message again (the document API's name for it)")
    priority: EscalationPriority
    status: Literal["open"]
    raisedBy: str | None
    delivery: Delivery = Field(description="Notification of the reviewers: pending until a worker sends it")
    createdAt: str

    @classmethod
    def of(cls, e: escalations.Raised) -> EscalationRaised:
        return cls.model_validate(
            {
                "escalationId": e.id,
                "id": e.id,
                "resourceType": e.resource_type,
                "resourceId": e.resource_id,
                "sectionId": e.section_id,
                "proposalId": e.proposal_id,
                "message": e.message,
                "question": e.message,
                "priority": e.priority,
                "status": e.status,
                "raisedBy": e.raised_by_name,
                "delivery": {
                    "status": e.delivery_status,
                    "attempts": e.delivery_attempts,
                    "error": None,
                    "deliveredAt": None,
                },
                "createdAt": iso(e.created_at),
            }
        )


# ---- topics: create, read, list, approval policy, content, join, escalate ----


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

    def new_topic(self) -> topic_store.NewTopic:
        return topic_store.NewTopic(
            title=self.title,
            content=self.content,
            tier=self.tier,
            depends_on=self.dependsOn,
            assumptions=self.assumptions,
            canonical_claim=self.canonicalClaim,
            jurisdiction=self.jurisdiction,
            authority=self.authority,
            source_ref=self.sourceRef,
            effective_date=self.effectiveDate,
            expiry_date=self.expiryDate,
            approval_policy=self.approvalPolicy,
            allow_self_approval=self.allowSelfApproval,
        )


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

    @classmethod
    def of(cls, v: topic_store.TopicView) -> Topic:
        return cls(**cls.fields(v))

    @staticmethod
    def fields(v: topic_store.TopicView) -> dict[str, Any]:
        """A topic's wire names, for this model and the detail that extends it."""
        t = v.topic
        return {
            "id": t.id,
            "title": t.title,
            "tier": t.tier,
            "status": t.status,
            "version": t.version,
            "canonicalClaim": t.canonical_claim,
            "jurisdiction": t.jurisdiction,
            "authority": t.authority,
            "sourceRef": t.source_ref,
            "effectiveDate": t.effective_date.isoformat() if t.effective_date else None,
            "expiryDate": t.expiry_date.isoformat() if t.expiry_date else None,
            "assumptions": t.assumptions or [],
            "dependsOn": v.depends_on,
            "creatorId": t.creator_id,
            "approvalPolicy": t.approval_policy,
            "allowSelfApproval": t.allow_self_approval,
            "consensusRatio": t.consensus_ratio,
            "consensusSince": iso(t.consensus_since),
            "lastVerifiedAt": iso(t.last_verified_at),
            "participantCount": v.participants,
            "proposalCount": v.proposals,
            "createdAt": iso(t.created_at),
            "updatedAt": iso(t.updated_at),
        }


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

    @classmethod
    def of(cls, c: topic_consensus.LegislationCited) -> LegislationCitation:
        s = c.section
        return cls(
            proposalId=c.proposal.proposal_id,
            proposalStatus=c.proposal.status,
            topicSectionId=c.proposal.topic_section_id,
            citation=s.citation,
            docId=s.doc_id,
            sectionRef=s.section_ref,
            versionDate=s.version_date.isoformat() if s.version_date else None,
            title=s.title,
            jurisdiction=s.jurisdiction,
            jurisdictionAbbreviation=s.jurisdiction_abbreviation,
            verifiedRef=s.verified_ref,
            sectionTitle=s.section_title,
            current=s.current,
        )


class TopicDetail(Topic):
    legislationCitations: list[LegislationCitation] = Field(
        description="Imported legislation sections the topic's proposals cite, oldest proposal first"
    )

    @classmethod
    def of_cited(cls, v: topic_store.TopicView, cited: list[topic_consensus.LegislationCited]) -> TopicDetail:
        return cls(**Topic.fields(v), legislationCitations=[LegislationCitation.of(c) for c in cited])


class TopicApprovalBody(Model):
    """Either field, or both; one left out (or null) keeps its value."""

    approvalPolicy: ApprovalPolicy | None = Field(default=None, description=APPROVAL_POLICY_TEXT)
    allowSelfApproval: bool | None = Field(default=None, description=SELF_APPROVAL_TEXT)


class TopicList(Model):
    topics: list[Topic]
    total: int
    limit: int
    offset: int

    @staticmethod
    def answer(page: topic_store.TopicPage) -> dict[str, Any]:
        """The page as this model's wire dict, which the operation's Shape checks strictly as it writes it: a
        hot read's answer builds no model instances (whose construction runs the request-side validators,
        trimming and NUL checks, field by field: six times the cost of the check for a page of 20)."""
        topics = [Topic.fields(v) for v in page.topics]
        return {"topics": topics, "total": page.total, "limit": page.limit, "offset": page.offset}


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

    @staticmethod
    def fields(d: topic_store.Dependency) -> dict[str, Any]:
        t = d.topic
        return {
            "id": t.id,
            "title": t.title,
            "tier": t.tier,
            "status": t.status,
            "relationship": d.relationship,
            "depth": d.depth,
            "version": t.version,
        }


class TopicContent(Model):
    topicId: str
    title: str
    status: TopicStatus
    version: int
    content: Annotated[str, AsWritten()] = Field(
        description="Markdown; with resolve=true the dependencies' content follows"
    )
    updatedAt: Timestamp
    resolvedDependencies: list[ResolvedDependency] | None = Field(
        default=None, description="Only with resolve=true: every topic depended on, transitively, once"
    )

    @model_serializer(mode="wrap")
    def _resolved_only_when_asked(self, dump: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = dump(self)
        if self.resolvedDependencies is None:
            data.pop("resolvedDependencies", None)
        return data

    @staticmethod
    def answer(c: topic_store.TopicContent) -> dict[str, Any]:
        """The content as this model's wire dict, checked strictly by the operation's Shape as it is written
        (no model instance built: see TopicList.answer); `resolvedDependencies` only when resolved."""
        t = c.topic
        found: dict[str, Any] = {
            "topicId": t.id,
            "title": t.title,
            "status": t.status,
            "version": t.version,
            "content": c.content,
            "updatedAt": iso(t.updated_at),
        }
        if c.resolved is not None:
            found["resolvedDependencies"] = [ResolvedDependency.fields(d) for d in c.resolved]
        return found


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


# A join (or an onboarding) by an agent a reviewer removed from the topic (PACT §9.2, domain/topics/leaving).
REMOVED_ERROR = {
    403: "A reviewer removed this agent from the topic (removed_by_reviewer, quoting why): it may join again "
    "once a reviewer readmits it"
}


class JoinBody(Model):
    pass
