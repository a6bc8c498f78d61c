"""Requests and responses of the reviewers' review API: escalations and the proposals people decide."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, cast
from uuid import UUID

from pydantic import Field

from domain.consensus.escalations import EscalationKind
from domain.consensus.models import EscalationPriority, Proposal, ProposalVote, stored_priority
from domain.consensus.policies import ApprovalPolicy
from domain.kernel.clock import iso
from domain.review import activity as review_activity
from domain.review import escalations as review_escalations
from domain.review import policy as review_policy
from domain.review import proposals as review_proposals
from domain.review.desk import ProposedChange
from domain.review.escalations import Decision, DecisionField, ReviewStatus
from domain.review.limits import ANSWER_MAX, NOTE_MAX
from domain.review.proposals import ProposalFilter
from domain.review.queue import DeskKind, DeskStatus, Filters, Page, ResourceType
from domain.topics.leaving import Removal
from domain.topics.store import TopicStatus
from web.hub.schemas import Model
from web.kernel.wire import MAX_INT, Exact, PriorityIn, Text, Timestamp


class Votes(Exact):
    approve: int
    reject: int
    object: int


class EscalationsQuery(Model):
    status: DeskStatus = Field(
        default=DeskStatus.OPEN,
        description="open: waiting for an answer; answered (decisions included); decided: answered with a "
        "decision on the proposal it names; closed: the proposal it was raised for was withdrawn; timed-out: "
        "questions nobody answered in time; all",
    )
    kind: Literal[DeskKind.ALL, DeskKind.ESCALATION, DeskKind.QUESTION] = Field(
        default=DeskKind.ALL,
        description="escalation (raised with .../escalate or by a policy), question "
        "(asked with .../ask-human), or all",
    )
    priority: PriorityIn | None = Field(
        default=None, description="Only this priority: urgent, high, medium (also spelled normal) or low"
    )
    resource: ResourceType = Field(
        default=ResourceType.ALL, description="Only escalations raised on topics, or on documents"
    )
    source: Literal[ResourceType.TOPIC, ResourceType.DOCUMENT] | None = Field(
        default=None,
        description="The former name of resource (kept): topic or document; read only when resource is not "
        "given (resource, the current name, wins)",
    )
    limit: int = Field(default=50, ge=1, le=200)
    offset: int = Field(default=0, ge=0, le=MAX_INT)

    def filters(self) -> Filters:
        return Filters(
            kind=DeskKind(self.kind),
            priority=self.priority,
            resource=self.resource if self.resource is not ResourceType.ALL else self.source or self.resource,
            status=self.status,
        )


class EscalatedProposal(Exact):
    proposalId: str
    status: str
    sectionId: str
    summary: str
    newContent: str
    authorId: str
    authorName: str
    votes: Votes

    @staticmethod
    def fields(p: Proposal) -> dict[str, Any]:
        """The proposal an escalation names, by wire name."""
        return {
            "proposalId": p.id,
            "status": p.status,
            "sectionId": p.section_id,
            "summary": p.summary,
            "newContent": p.new_content,
            "authorId": p.author_id,
            "authorName": p.author_name,
            "votes": {"approve": p.approve_count, "reject": p.reject_count, "object": p.object_count},
        }


class Answer(Exact):
    """A reviewer's answer; for a closed escalation, why it closed and who closed it (decision null)."""

    text: str
    answeredBy: str | None
    answeredAt: Timestamp | None
    decision: DecisionField | None = Field(
        description="what the answer decided on the proposal the escalation names, if anything"
    )


class EscalationItem(Exact):
    escalationId: str
    kind: EscalationKind = Field(
        description="escalation (raised with .../escalate, or by an approval policy) or question (asked with "
        ".../ask-human: the agent waits for the answer until timeoutAt)"
    )
    status: ReviewStatus
    source: Literal[ResourceType.TOPIC, ResourceType.DOCUMENT]
    resourceType: Literal[ResourceType.TOPIC, ResourceType.DOCUMENT]
    resourceId: str
    resourceTitle: str | None = Field(description="The topic's title or the document's name")
    resourceVersion: int | None
    sectionId: str | None
    sectionText: str | None = Field(description="The section's body as it reads now, when it still exists")
    question: str
    context: str | None = Field(description="What the agent added to help answer a question")
    timeoutAt: Timestamp | None = Field(
        description="A question's deadline: unanswered then, it times out (escalations have none)"
    )
    priority: EscalationPriority
    raisedBy: str | None = Field(description="Id of the agent that asked")
    raisedByName: str | None
    createdAt: Timestamp
    proposal: EscalatedProposal | None
    answer: Answer | None
    url: str

    @staticmethod
    def fields(r: review_escalations.InQueue) -> dict[str, Any]:
        """The escalation with its context by wire name, all but its url (the review desk's pages read these
        too). A dict, as the answer always was: the operation checks it against the model, and its keys keep
        their order (an `Answered` instance would list url before decision)."""
        esc, info = r.escalation, r.resource
        return {
            "escalationId": esc.id,
            "kind": esc.kind,
            "status": r.status,
            "source": esc.resource_type,
            "resourceType": esc.resource_type,
            "resourceId": esc.resource_id,
            "resourceTitle": info.title if info else None,
            "resourceVersion": info.version if info else None,
            "sectionId": esc.section_id,
            "sectionText": r.section_text,
            "question": esc.message,
            "context": esc.context,
            "timeoutAt": iso(esc.timeout_at),
            "priority": stored_priority(esc.priority),
            "raisedBy": esc.raised_by,
            "raisedByName": esc.raised_by_name,
            "createdAt": iso(esc.created_at),
            "proposal": EscalatedProposal.fields(r.proposal) if r.proposal is not None else None,
            "answer": {
                "text": esc.resolution or "",
                "answeredBy": esc.resolved_by,
                "answeredAt": iso(esc.resolved_at),
                "decision": esc.decision,
            }
            if r.answered
            else None,
        }

    @staticmethod
    def answer_of(r: review_escalations.InQueue, url: Callable[[str], str]) -> dict[str, Any]:
        """The escalation as the review API answers it; `url` gives an escalation's address from its id."""
        return {**EscalationItem.fields(r), "url": url(r.escalation.id)}


class EscalationQueue(Exact):
    """A page of the queue: by priority (urgent, high, medium, low) then oldest first; answered, decided and
    closed ones newest answer first. The filters it applied are echoed."""

    escalations: list[EscalationItem]
    total: int = Field(description="How many escalations match the filters, on every page")
    limit: int
    offset: int
    status: DeskStatus
    kind: Literal[DeskKind.ALL, DeskKind.ESCALATION, DeskKind.QUESTION]
    priority: EscalationPriority | None
    resource: ResourceType
    source: Literal[ResourceType.TOPIC, ResourceType.DOCUMENT] | None = Field(
        description="The former name of resource: null when it is all"
    )

    @staticmethod
    def answer(page: review_escalations.QueuePage, url: Callable[[str], str]) -> dict[str, Any]:
        filters = page.filters
        return {
            "escalations": [EscalationItem.answer_of(r, url) for r in page.items],
            "total": page.total,
            "limit": page.limit,
            "offset": page.offset,
            "status": filters.status,
            "kind": filters.kind,
            "priority": filters.priority,
            "resource": filters.resource,
            "source": None if filters.resource is ResourceType.ALL else filters.resource,
        }


class AnswerBody(Model):
    answer: Text = Field(
        min_length=1, max_length=ANSWER_MAX, description="The reviewer's answer to the question"
    )
    decision: DecisionField | None = Field(
        default=None,
        description="Also decide the proposal the escalation names (pending or objected): approve merges it",
    )


class Answered(EscalationItem):
    decision: DecisionField | None
    eventSequence: int = Field(description="Sequence number of pact.human.resolved on the resource's stream")

    @staticmethod
    def of_answer(done: review_escalations.Answered, url: Callable[[str], str]) -> dict[str, Any]:
        result = EscalationItem.fields(done.item)
        result["decision"] = done.decision
        result["eventSequence"] = done.event_sequence
        if done.resource_version is not None:  # the version after the decision, in its place
            result["resourceVersion"] = done.resource_version
        return {**result, "url": url(done.item.escalation.id)}


class ProposalsQuery(Model):
    status: ProposalFilter = Field(
        default=ProposalFilter.OBJECTED,
        description="A stored status, `open` (pending or objected: what a person may still decide), "
        "`approved` or `merged` (the same: merged into the resource), or `all`",
    )
    resource: ResourceType = Field(
        default=ResourceType.DOCUMENT,
        description="Whose proposals: `document` (the default: the proposals an objection pauses for a "
        "person), `topic` or `all`",
    )
    resourceId: UUID | None = Field(default=None, description="Only the proposals of this topic or document")
    limit: int = Field(default=50, ge=1, le=200)
    offset: int = Field(default=0, ge=0, le=MAX_INT)


class Objection(Exact):
    agentId: str
    agentName: str
    reason: str | None
    createdAt: Timestamp

    @classmethod
    def of(cls, v: ProposalVote) -> Objection:
        return cls(agentId=v.agent_id, agentName=v.agent_name, reason=v.reason, createdAt=iso(v.created_at))


class OpenProposal(EscalatedProposal):
    """A proposal still open on the section an escalation names, as the person answering it judges it: the
    shape of the proposal an escalation names, with when it was made and its objections."""

    createdAt: Timestamp
    objections: list[Objection] = Field(description="Each objection with its reason, oldest first")

    @staticmethod
    def of_change(c: ProposedChange) -> dict[str, Any]:
        return {
            "proposalId": c.proposal_id,
            "status": c.status,
            "sectionId": c.section_id,
            "summary": c.summary,
            "newContent": c.after,
            "authorId": c.author_id,
            "authorName": c.author,
            "votes": {"approve": c.approvals, "reject": c.rejections, "object": c.objection_count},
            "createdAt": iso(c.created_at),
            "objections": [
                {"agentId": v.agent_id, "agentName": v.agent, "reason": v.reason, "createdAt": iso(v.at)}
                for v in c.objections
            ],
        }


class EscalationDetail(EscalationItem):
    """One escalation with its context; while it waits for an answer and names a section but no proposal,
    also the proposals open on that section (what the agents want it to say)."""

    openProposals: list[OpenProposal] = Field(
        description="Pending or objected proposals on the escalation's section, oldest first, while it is "
        "open and names a section and no proposal; otherwise empty"
    )

    @staticmethod
    def detail_of(
        r: review_escalations.InQueue, url: Callable[[str], str], open_on_section: list[ProposedChange]
    ) -> dict[str, Any]:
        return {
            **EscalationItem.answer_of(r, url),
            "openProposals": [OpenProposal.of_change(c) for c in open_on_section],
        }


class ProposalItem(Exact):
    proposalId: str
    status: str
    resourceType: Literal[ResourceType.TOPIC, ResourceType.DOCUMENT]
    resourceId: str
    resourceTitle: str | None = Field(description="The topic's title or the document's name")
    resourceVersion: int | None
    documentId: str | None = Field(description="The document's id (null for a topic's proposal)")
    documentTitle: str | None = Field(description="The document's name (null for a topic's proposal)")
    documentVersion: int | None = Field(description="The document's version (null for a topic's proposal)")
    baseVersion: int
    sectionId: str
    currentText: str | None = Field(description="The section's body as it reads now")
    proposedText: str
    summary: str
    authorId: str
    authorName: str
    votes: Votes
    objections: list[Objection]
    createdAt: Timestamp
    resolvedAt: Timestamp | None
    url: str

    @classmethod
    def of(cls, r: review_proposals.Reviewed, url: Callable[[str], str]) -> ProposalItem:
        return cls(**_item_fields(r, url))


def _item_fields(r: review_proposals.Reviewed, url: Callable[[str], str]) -> dict[str, Any]:
    """A reviewed proposal's fields by wire name; `url` gives a proposal's address from its id."""
    p, info = r.proposal, r.resource
    title, version = (info.title, info.version) if info else (None, None)
    document = p.resource_type == ResourceType.DOCUMENT
    return {
        "proposalId": p.id,
        "status": p.status,
        "resourceType": p.resource_type,
        "resourceId": p.resource_id,
        "resourceTitle": title,
        "resourceVersion": version,
        "documentId": p.resource_id if document else None,
        "documentTitle": title if document else None,
        "documentVersion": version if document else None,
        "baseVersion": p.base_version,
        "sectionId": p.section_id,
        "currentText": r.current_text,
        "proposedText": p.new_content,
        "summary": p.summary,
        "authorId": p.author_id,
        "authorName": p.author_name,
        "votes": Votes(approve=p.approve_count, reject=p.reject_count, object=p.object_count),
        "objections": [Objection.of(v) for v in r.objections],
        "createdAt": iso(p.created_at),
        "resolvedAt": iso(p.resolved_at),
        "url": url(p.id),
    }


class ProposalQueue(Exact):
    proposals: list[ProposalItem]
    total: int
    limit: int
    offset: int
    status: ProposalFilter
    resource: ResourceType
    resourceId: str | None

    @classmethod
    def of(cls, q: review_proposals.Queue, url: Callable[[str], str]) -> ProposalQueue:
        return cls(
            proposals=[ProposalItem.of(r, url) for r in q.items],
            total=q.total,
            limit=q.limit,
            offset=q.offset,
            status=q.status,
            resource=q.resource,
            resourceId=q.resource_id,
        )


class DecideBody(Model):
    decision: DecisionField = Field(description="approve merges the proposal; reject refuses it")
    note: Text = Field(min_length=1, max_length=NOTE_MAX, description="Why: the agents read it")


class Decided(ProposalItem):
    decision: DecisionField
    note: str
    decidedBy: str
    statusBefore: str = Field(
        description="The proposal's status when the reviewer decided it: objected (paused by an objection) "
        "or pending (the agents were still voting; the decision overrides their votes)"
    )
    eventSequence: int = Field(description="Sequence number of pact.human.resolved on the resource's stream")

    @classmethod
    def of_decision(cls, d: review_proposals.Decided, url: Callable[[str], str]) -> Decided:
        return cls(
            **_item_fields(d.item, url),
            decision=Decision(d.decision),
            note=d.note,
            decidedBy=d.decided_by,
            statusBefore=d.status_before,
            eventSequence=d.event_sequence,
        )


# ---- one topic or document at a glance (PACT §9.3), and where proposals are open ---------------------------


class ActivityProposal(Exact):
    proposalId: str
    status: str = Field(description="pending, or objected (paused by an objection)")
    sectionId: str
    summary: str
    authorName: str
    votes: Votes
    createdAt: Timestamp
    url: str = Field(description="The proposal on the review API, where a reviewer decides it")


class Contest(Exact):
    sectionId: str
    proposals: int = Field(description="How many proposals are open on the section (more than one)")
    authors: list[str] = Field(description="Their authors, each once, oldest proposal first")


class RemovedAgent(Exact):
    agentId: str
    agentName: str
    removedBy: str | None
    removedAt: Timestamp
    reason: str | None


class ResourceActivity(Exact):
    """A topic or document as a person reads it before stepping in."""

    resourceType: Literal[ResourceType.TOPIC, ResourceType.DOCUMENT]
    resourceId: str
    resourceTitle: str | None
    resourceVersion: int | None
    approvalPolicy: ApprovalPolicy = Field(description="The approval policy its proposals follow now")
    agents: list[str] = Field(description="The names of the agents active on it, in the order they joined")
    openTotal: int = Field(description="Every open (pending or objected) proposal on it")
    objectedTotal: int = Field(description="Of those, the ones an objection paused")
    openProposals: list[ActivityProposal] = Field(
        description="Pending or objected proposals, oldest first: the 200 oldest when there are more"
    )
    contestedSections: list[Contest] = Field(
        description="Sections where more than one proposal is open (the first 50 by section id)"
    )
    mergedLastHour: int
    openEscalations: int = Field(description="Escalations and questions on it waiting for a person")
    lastPersonAt: Timestamp | None = Field(description="When a person last acted on it (its stream)")
    removedAgents: list[RemovedAgent] = Field(
        description="A topic's agents a reviewer removed and nobody readmitted, the latest first (the 200 "
        "latest); always empty for a document, whose organisation removes its agents"
    )

    @classmethod
    def of(cls, a: review_activity.Activity, proposal_url: Callable[[str], str]) -> ResourceActivity:
        return cls.model_validate(
            {
                "resourceType": a.resource_type,
                "resourceId": a.resource_id,
                "resourceTitle": a.title,
                "resourceVersion": a.version,
                "approvalPolicy": a.approval.policy,
                "agents": list(a.agents),
                "openTotal": a.open_total,
                "objectedTotal": a.objected_total,
                "openProposals": [
                    ActivityProposal(
                        proposalId=p.proposal_id,
                        status=p.status,
                        sectionId=p.section_id,
                        summary=p.summary,
                        authorName=p.author,
                        votes=Votes(approve=p.approvals, reject=p.rejections, object=p.objections),
                        createdAt=iso(p.created_at),
                        url=proposal_url(p.proposal_id),
                    )
                    for p in a.open_proposals
                ],
                "contestedSections": [
                    Contest(sectionId=c.section_id, proposals=c.proposals, authors=list(c.authors))
                    for c in a.contested
                ],
                "mergedLastHour": a.merged_recently,
                "openEscalations": a.open_escalations,
                "lastPersonAt": iso(a.last_person_at) if a.last_person_at else None,
                "removedAgents": [
                    RemovedAgent(
                        agentId=r.agent_id,
                        agentName=r.agent_name,
                        removedBy=r.removed_by,
                        removedAt=iso(r.removed_at),
                        reason=r.note,
                    )
                    for r in a.removed
                ],
            }
        )


class OpenQuery(Model):
    resource: ResourceType = Field(default=ResourceType.ALL, description="`all`, `topic` or `document`")
    limit: int = Field(default=50, ge=1, le=200)
    offset: int = Field(default=0, ge=0, le=MAX_INT)


class OpenResourceItem(Exact):
    resourceType: Literal[ResourceType.TOPIC, ResourceType.DOCUMENT]
    resourceId: str
    resourceTitle: str | None
    open: int = Field(description="Proposals open on it: pending or objected")
    objected: int = Field(description="Of those, the ones an objection paused")
    oldestOpenSince: Timestamp
    url: str = Field(description="The resource at a glance on the review API")


class OpenResources(Exact):
    """The topics and documents where proposals are open, the one whose oldest has waited longest first."""

    resources: list[OpenResourceItem]
    total: int
    limit: int
    offset: int
    resource: ResourceType

    @classmethod
    def of(
        cls, page: Page[review_activity.OpenResource], resource: ResourceType, url: Callable[[str, str], str]
    ) -> OpenResources:
        return cls(
            resources=[
                OpenResourceItem.model_validate(
                    {
                        "resourceType": r.resource_type,
                        "resourceId": r.resource_id,
                        "resourceTitle": r.title,
                        "open": r.open,
                        "objected": r.objected,
                        "oldestOpenSince": iso(r.oldest),
                        "url": url(r.resource_type, r.resource_id),
                    }
                )
                for r in page.items
            ],
            total=page.total,
            limit=page.limit,
            offset=page.offset,
            resource=resource,
        )


class PolicyBody(Model):
    approvalPolicy: ApprovalPolicy = Field(
        description="The policy the topic's proposals follow from now on; `human-only` puts every pending "
        "and new proposal before a person"
    )
    note: Text = Field(min_length=1, max_length=NOTE_MAX, description="Why: the audit trail keeps it")


class PolicySetAnswer(Exact):
    topicId: str
    approvalPolicy: ApprovalPolicy
    previousPolicy: ApprovalPolicy
    changed: bool = Field(description="False when the topic already had this policy (nothing was done)")
    setBy: str

    @classmethod
    def of(cls, done: review_policy.PolicySet) -> PolicySetAnswer:
        return cls(
            topicId=done.topic_id,
            approvalPolicy=done.after.policy,
            previousPolicy=done.before.policy,
            changed=done.changed,
            setBy=done.set_by,
        )


class RemovalBody(Model):
    note: Text = Field(
        min_length=1,
        max_length=NOTE_MAX,
        description="Why: a removal's reason is on the topic's event stream for its agents; the audit trail "
        "keeps both",
    )


class ParticipantStanding(Exact):
    """An agent's standing on a topic after a reviewer removed or readmitted it (PACT §9.2)."""

    topicId: str
    agentId: str
    agentName: str
    removed: bool = Field(description="True: the agent may not join the topic until a reviewer readmits it")
    changed: bool = Field(description="False when nothing was done: removed already, or not removed")
    removedAt: Timestamp | None
    removedBy: str | None = Field(description="The reviewer who removed the agent")
    reason: str | None = Field(description="Why it was removed")
    topicStatus: TopicStatus = Field(
        description="The topic's status after the call (a removal may break consensus)"
    )
    actedBy: str = Field(description="The reviewer who made this call")

    @classmethod
    def of(cls, done: Removal) -> ParticipantStanding:
        return cls(
            topicId=done.topic_id,
            agentId=done.agent_id,
            agentName=done.agent_name,
            removed=done.removed,
            changed=done.changed,
            removedAt=iso(done.removed_at) if done.removed_at else None,
            removedBy=done.removed_by,
            reason=done.note,
            topicStatus=cast(TopicStatus, done.topic_status),
            actedBy=done.acted_by,
        )
