"""The wire of the human layer on both apps' PACT paths (PACT v2.0.3 §7.1 "PACT Live", §7.2): an agent's
question to a person (`ask-human`) and the answers (`human-responses`, `respond`), a person's resolution of
an escalation (`resolve`), and the agents' own escalations with their resolutions. Topics (hub) and
documents (document API) answer in these same shapes; the domain gives `raised.View`s."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import ConfigDict, Field

from domain.consensus import escalations as raised
from domain.consensus.escalations import AgentEscalationStatus, EscalationStatus, HumanQueryStatus
from domain.consensus.models import EscalationPriority
from domain.kernel.clock import iso
from domain.review.escalations import Decision
from domain.review.human import Resolution, ResolveRequest
from web.kernel.wire import MAX_INT, Exact, Text, Timestamp, Trimmed


class ResourceType(StrEnum):
    TOPIC = "topic"  # a hub topic
    DOCUMENT = "document"  # a document of the document API


class Scope(StrEnum):
    """Whose a list holds: the caller's own, or every agent's (the resource's owner, a person)."""

    OWN = "own"
    ALL = "all"


class _Body(Trimmed):
    model_config = ConfigDict(extra="ignore")


class _Query(Trimmed):
    model_config = ConfigDict(extra="ignore")


# ---- ask-human and the answers ------------------------------------------------------------------------


class AskHumanBody(_Body):
    """PACT's ask-human request (the PACT CLI's `ask` sends it, with null for what it was not given)."""

    question: Text = Field(
        min_length=1, max_length=5_000, description="The question for a person (reviewers, the custodians)."
    )
    sectionId: str | None = Field(
        default=None, max_length=256, description="The section the question is about, if any."
    )
    context: str | None = Field(
        default=None, max_length=10_000, description="What the person needs to know to answer."
    )
    timeoutSeconds: int = Field(
        default=raised.DEFAULT_TIMEOUT_SECONDS,
        ge=raised.MIN_TIMEOUT_SECONDS,
        le=raised.WIRE_MAX_TIMEOUT_SECONDS,
        description="How long to wait for the answer (default 60 s); at most the server's "
        "CONCORD_HUMAN_QUERY_MAX_SECONDS (default 3600), to which a longer wait is cut. Unanswered then, the "
        "question is timed-out.",
    )


class HumanResponse(Exact):
    answer: str
    responderId: str | None = Field(description="Id of the person (reviewer or custodian) who answered")
    responderName: str | None
    respondedAt: Timestamp | None


class HumanQuery(Exact):
    """A question an agent asked a person, with the answer once there is one."""

    queryId: str = Field(description="The question's id (the same id in the hub's review queue)")
    resourceType: ResourceType
    resourceId: str
    sectionId: str | None
    question: str
    context: str | None
    status: HumanQueryStatus = Field(
        description="pending: waiting for a person; answered: `response` holds the answer; timed-out: "
        "nobody answered by timeoutAt"
    )
    agentId: str | None = Field(description="The agent that asked")
    agentName: str | None
    askedAt: Timestamp
    timeoutSeconds: int = Field(description="How long the question waits, as granted (see timeoutAt)")
    timeoutAt: Timestamp
    response: HumanResponse | None

    @classmethod
    def of(cls, v: raised.View) -> HumanQuery:
        assert v.timeout_at is not None, "a question has a timeout"
        assert v.timeout_seconds is not None
        return cls(
            queryId=v.id,
            resourceType=_resource_type(v.resource_type),
            resourceId=v.resource_id,
            sectionId=v.section_id,
            question=v.question,
            context=v.context,
            status=raised.QUERY_STATUS[v.state],
            agentId=v.raised_by,
            agentName=v.raised_by_name,
            askedAt=iso(v.created_at),
            timeoutSeconds=v.timeout_seconds,
            timeoutAt=iso(v.timeout_at),
            response=None
            if v.answer is None
            else HumanResponse(
                answer=v.answer.text,
                responderId=v.answer.by_id,
                responderName=v.answer.by_name,
                respondedAt=iso(v.answer.at),
            ),
        )


def _resource_type(value: str) -> ResourceType:
    return ResourceType(value)


class HumanQueriesQuery(_Query):
    status: HumanQueryStatus | None = Field(default=None, description="Only questions of this status")
    limit: int = Field(default=50, ge=1, le=200)
    offset: int = Field(default=0, ge=0, le=MAX_INT)


class HumanQueryList(Exact):
    queries: list[HumanQuery] = Field(description="Newest first")
    total: int
    limit: int
    offset: int
    scope: Scope = Field(
        description="own: the questions the caller asked; all: every agent's (the resource's owner, a person)"
    )

    @classmethod
    def of(cls, found: raised.Listing) -> HumanQueryList:
        return cls(
            queries=[HumanQuery.of(v) for v in found.items],
            total=found.total,
            limit=found.limit,
            offset=found.offset,
            scope=Scope.ALL if found.everyone else Scope.OWN,
        )


class RespondBody(_Body):
    answer: Text = Field(
        min_length=1, max_length=5_000, description="The person's answer; the agent that asked reads it."
    )


# ---- escalations and their resolution -----------------------------------------------------------------


class ResolveBody(_Body):
    """PACT's resolve request, plus what the resolution does to the proposal the escalation names."""

    escalationId: str = Field(min_length=1, max_length=36, description="The escalation being resolved")
    decision: Text = Field(
        min_length=1, max_length=5_000, description="The person's binding decision, in words"
    )
    sectionId: str | None = Field(
        default=None,
        max_length=256,
        description="The section the escalation is about; when given it must be the escalation's",
    )
    isOverride: bool = Field(default=False, description="Whether this resolution overrides agent consensus")
    resolvedProposalIds: list[Annotated[str, Field(min_length=1, max_length=36)]] = Field(
        default_factory=list,
        max_length=10,
        description="The proposals this resolution decides: only the one the escalation names (with "
        "proposalDecision)",
    )
    proposalDecision: Decision | None = Field(
        default=None,
        description="approve merges the proposal the escalation names (pending or objected); reject "
        "refuses it; omitted: the proposal is left as it is",
    )

    def request(self) -> ResolveRequest:
        return ResolveRequest(
            escalation_id=self.escalationId,
            decision=self.decision,
            section_id=self.sectionId or None,
            is_override=self.isOverride,
            resolved_proposal_ids=tuple(self.resolvedProposalIds),
            proposal_decision=self.proposalDecision,
        )


class Resolved(Exact):
    """A person's resolution of an escalation (PACT OnHumanResolved)."""

    resolutionId: str = Field(description="The same as escalationId: one resolution per escalation")
    escalationId: str
    resourceType: ResourceType
    resourceId: str
    sectionId: str | None
    decision: str
    isOverride: bool
    proposalId: str | None = Field(description="The proposal the escalation names, if any")
    resolvedProposalIds: list[str]
    proposalDecision: Decision | None
    proposalStatus: str | None = Field(description="The proposal's status after the resolution")
    resourceVersion: int | None = Field(description="The resource's version after a merge it caused")
    resolvedBy: str | None
    resolvedById: str | None
    resolvedAt: Timestamp | None
    eventSequence: int = Field(description="Sequence number of pact.human.resolved on the resource's stream")

    @classmethod
    def of(cls, r: Resolution) -> Resolved:
        v, answer = r.escalation, r.escalation.answer
        assert answer is not None, "a resolved escalation has its answer"
        return cls(
            resolutionId=v.id,
            escalationId=v.id,
            resourceType=_resource_type(v.resource_type),
            resourceId=v.resource_id,
            sectionId=v.section_id,
            decision=answer.text,
            isOverride=answer.is_override,
            proposalId=v.proposal_id,
            resolvedProposalIds=[v.proposal_id] if answer.decision and v.proposal_id else [],
            proposalDecision=Decision(answer.decision) if answer.decision else None,
            proposalStatus=r.proposal_status,
            resourceVersion=r.resource_version,
            resolvedBy=answer.by_name,
            resolvedById=answer.by_id,
            resolvedAt=iso(answer.at),
            eventSequence=r.event_sequence,
        )


class EscalationResolution(Exact):
    """How an escalation ended: a person's answer, or (status closed) why it closed and who closed it."""

    decision: str = Field(description="The person's answer or decision in words, or why it closed")
    proposalDecision: Decision | None = Field(description="What it decided on the proposal named, if any")
    isOverride: bool
    resolvedBy: str | None
    resolvedById: str | None
    resolvedAt: Timestamp | None


class AgentEscalation(Exact):
    """An escalation as its agent reads it: open until a person resolves it (answered, with the resolution),
    or closed when the proposal an approval policy raised it for was withdrawn."""

    escalationId: str
    status: AgentEscalationStatus
    resourceType: ResourceType
    resourceId: str
    sectionId: str | None
    proposalId: str | None
    question: str
    priority: EscalationPriority
    agentId: str | None = Field(description="The agent that escalated")
    agentName: str | None
    raisedAt: Timestamp
    resolution: EscalationResolution | None

    @classmethod
    def of(cls, v: raised.View) -> AgentEscalation:
        a = v.answer
        return cls(
            escalationId=v.id,
            status=raised.AGENT_STATUS[v.state],
            resourceType=_resource_type(v.resource_type),
            resourceId=v.resource_id,
            sectionId=v.section_id,
            proposalId=v.proposal_id,
            question=v.question,
            priority=v.priority,
            agentId=v.raised_by,
            agentName=v.raised_by_name,
            raisedAt=iso(v.created_at),
            resolution=None
            if a is None
            else EscalationResolution(
                decision=a.text,
                proposalDecision=Decision(a.decision) if a.decision else None,
                isOverride=a.is_override,
                resolvedBy=a.by_name,
                resolvedById=a.by_id,
                resolvedAt=iso(a.at),
            ),
        )


class EscalationsQuery(_Query):
    status: AgentEscalationStatus | None = Field(
        default=None, description="Only escalations of this status (open, answered, closed)"
    )
    limit: int = Field(default=50, ge=1, le=200)
    offset: int = Field(default=0, ge=0, le=MAX_INT)


class AgentEscalationList(Exact):
    escalations: list[AgentEscalation] = Field(description="Newest first")
    total: int
    limit: int
    offset: int
    scope: Scope = Field(
        description="own: the escalations the caller raised; all: every agent's (the resource's owner, a "
        "person)"
    )

    @classmethod
    def of(cls, found: raised.Listing) -> AgentEscalationList:
        return cls(
            escalations=[AgentEscalation.of(v) for v in found.items],
            total=found.total,
            limit=found.limit,
            offset=found.offset,
            scope=Scope.ALL if found.everyone else Scope.OWN,
        )


def state_of(status: AgentEscalationStatus | None) -> EscalationStatus | None:
    """The stored state an agent's escalation filter names."""
    if status is None:
        return None
    return next(state for state, wire in raised.AGENT_STATUS.items() if wire is status)


def query_state_of(status: HumanQueryStatus | None) -> EscalationStatus | None:
    """The stored state a question filter names."""
    if status is None:
        return None
    return next(state for state, wire in raised.QUERY_STATUS.items() if wire is status)
