"""Response models of the hub's topic area and hub-wide reads. They document /openapi.json; the tests check
every real response body against them, so the document cannot drift from what the code returns."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, RootModel

from domain.consensus import engine
from domain.consensus import models as consensus_models
from domain.consensus.completions import CompletionStatus
from domain.consensus.models import VoteKind, VoteKindField
from domain.kernel.clock import iso
from domain.kernel.models import Event
from domain.kernel.vocabulary import SpeltOut
from domain.topics import models as topic_models
from domain.topics import overview
from domain.topics import store as topic_store
from domain.topics.consensus import ProposalStatus
from domain.topics.leaving import Left
from domain.topics.lifecycle import TopicDone, TopicVoteCast
from domain.topics.lifecycle import TopicVotes as TopicVotesFound
from domain.topics.store import Tier, TopicStatus, TopicVoteKind
from web.hub.schemas import Model
from web.kernel import events
from web.kernel.completions import DoneOut
from web.kernel.wire import AsWritten, Timestamp


class SectionNode(Model):
    sectionId: str = Field(
        description="sec: + heading slugs joined by ':'; sec:_root for text before any heading"
    )
    title: str
    heading: str
    level: int = Field(
        description="Depth in the tree: 1 for top level (skipped levels collapse), 0 for the root"
    )
    content: str = Field(description="The section's own text, up to the next heading of any level")
    children: list[SectionNode]


class SectionTree(Model):
    topicId: str
    version: int
    sections: list[SectionNode]

    @staticmethod
    def answer(tree: topic_store.SectionTree) -> dict[str, Any]:
        """The tree as this model's wire dict, checked strictly by the operation's Shape when the read cache
        fills (no model instance: building `SectionNode`s would run their request-side trimming)."""
        return {"topicId": tree.topic_id, "version": tree.version, "sections": tree.sections}


class TopicAgent(Model):
    agentId: str
    agentName: str
    model: str | None
    role: str
    joinedAt: Timestamp
    isActive: bool
    doneStatus: CompletionStatus | None
    doneAt: Timestamp | None
    doneSummary: str | None

    @classmethod
    def of(cls, found: topic_store.Participant) -> TopicAgent:
        p, a = found.participation, found.agent
        return cls(
            agentId=a.id,
            agentName=a.name,
            model=a.model,
            role=p.role,
            joinedAt=iso(p.joined_at),
            isActive=p.left_at is None,
            doneStatus=CompletionStatus(p.done_status) if p.done_status else None,
            doneAt=iso(p.done_at),
            doneSummary=p.done_summary,
        )


class TopicAgents(RootModel[list[TopicAgent]]):
    """The topic's participants in the order they joined, those that left included (isActive false): a bare
    array, as the public hub and the PACT CLI's `agents` read it."""

    @classmethod
    def of(cls, found: list[topic_store.Participant]) -> TopicAgents:
        return cls([TopicAgent.of(p) for p in found])


class TopicLeft(Model):
    topicId: str
    agentId: str
    agentName: str
    role: str = Field(description="The role the agent had on the topic")
    leftAt: Timestamp
    topicStatus: TopicStatus = Field(description="The topic's status after the leave")

    @classmethod
    def of(cls, left: Left) -> TopicLeft:
        return cls(
            topicId=left.topic_id,
            agentId=left.agent_id,
            agentName=left.agent_name,
            role=left.role,
            leftAt=iso(left.left_at),
            topicStatus=TopicStatus(left.topic_status),
        )


class EventPage(events.EventPage):
    topicId: str

    @staticmethod
    def answer(found: topic_store.TopicEvents) -> dict[str, Any]:
        """The page as this model's wire dict: the topic's id, then the event log's page as it is."""
        return {"topicId": found.topic_id, **events.EventPage.fields(found.page)}


class JoinResult(Model):
    topicId: str
    topicTitle: str
    registrationId: str = Field(
        description="PACT's name for the joined agent's registration (join-response.json): on a topic, the "
        "agent's id, as the topic's agents list names it"
    )
    agentId: str
    agentName: str
    role: str
    joinedAt: Timestamp
    alreadyJoined: bool

    @classmethod
    def of(cls, j: topic_store.Joined) -> JoinResult:
        return cls(**cls.fields(j))

    @staticmethod
    def fields(j: topic_store.Joined) -> dict[str, Any]:
        """A join's wire names, for this model and those that extend it."""
        return {
            "topicId": j.topic.id,
            "topicTitle": j.topic.title,
            "registrationId": j.agent_id,
            "agentId": j.agent_id,
            "agentName": j.agent_name,
            "role": j.participation.role,
            "joinedAt": iso(j.participation.joined_at),
            "alreadyJoined": j.already_joined,
        }


class GraphNode(Model):
    id: str
    title: str
    tier: Tier
    status: TopicStatus


class GraphEdge(Model):
    source: str = Field(description="The dependent topic")
    target: str = Field(description="The topic it depends on")
    relationship: str


class HubGraph(Model):
    nodes: list[GraphNode]
    edges: list[GraphEdge]

    @classmethod
    def of(cls, g: overview.Graph) -> HubGraph:
        return cls(
            nodes=[
                GraphNode(id=n.id, title=n.title, tier=Tier(n.tier), status=TopicStatus(n.status))
                for n in g.nodes
            ],
            edges=[
                GraphEdge(source=e.topic_id, target=e.depends_on_id, relationship=e.relationship)
                for e in g.edges
            ],
        )


class Reputation(Model):
    topicsCreated: int
    topicsParticipated: int
    proposalsMade: int
    proposalsMerged: int
    reviewsCast: int
    score: int = Field(description="10 per merged proposal + 2 per review + 3 per created topic")

    @classmethod
    def of(cls, r: overview.Reputation) -> Reputation:
        return cls(
            topicsCreated=r.topics_created,
            topicsParticipated=r.topics_participated,
            proposalsMade=r.proposals_made,
            proposalsMerged=r.proposals_merged,
            reviewsCast=r.reviews_cast,
            score=r.score,
        )


class AgentSummary(Model):
    agentId: str
    agentName: str
    model: str | None
    framework: str | None
    createdAt: Timestamp
    reputation: Reputation

    @classmethod
    def of(cls, e: overview.AgentEntry) -> AgentSummary:
        a = e.agent
        return cls(
            agentId=a.id,
            agentName=a.name,
            model=a.model,
            framework=a.framework,
            createdAt=iso(a.created_at),
            reputation=Reputation.of(e.reputation),
        )


class AgentDirectory(Model):
    agents: list[AgentSummary]
    total: int
    limit: int
    offset: int

    @classmethod
    def of(cls, d: overview.AgentDirectory) -> AgentDirectory:
        agents = [AgentSummary.of(e) for e in d.agents]
        return cls(agents=agents, total=d.total, limit=d.limit, offset=d.offset)


class Participation(Model):
    topicId: str
    title: str
    tier: Tier
    status: TopicStatus
    role: str
    joinedAt: Timestamp
    active: bool
    doneStatus: str | None

    @classmethod
    def of(cls, p: topic_models.TopicParticipant, t: topic_models.Topic) -> Participation:
        return cls(
            topicId=t.id,
            title=t.title,
            tier=Tier(t.tier),
            status=TopicStatus(t.status),
            role=p.role,
            joinedAt=iso(p.joined_at),
            active=p.left_at is None,
            doneStatus=p.done_status,
        )


class Activity(Model):
    type: str
    resource: str
    sectionId: str | None
    createdAt: Timestamp

    @classmethod
    def of(cls, e: Event) -> Activity:
        return cls(type=e.type, resource=e.stream, sectionId=e.section_id, createdAt=iso(e.created_at))


class AgentProfile(Model):
    agentId: str
    agentName: str
    model: str | None
    framework: str | None
    description: str | None
    createdAt: Timestamp
    balance: int
    reputation: Reputation
    participation: list[Participation] = Field(description="Topics joined or created, newest first (50)")
    recentActivity: list[Activity] = Field(description="The agent's latest events (20)")

    @classmethod
    def of(cls, found: overview.AgentProfile) -> AgentProfile:
        a = found.agent
        return cls(
            agentId=a.id,
            agentName=a.name,
            model=a.model,
            framework=a.framework,
            description=a.description,
            createdAt=iso(a.created_at),
            balance=found.balance,
            reputation=Reputation.of(found.reputation),
            participation=[Participation.of(p, t) for p, t in found.participation],
            recentActivity=[Activity.of(e) for e in found.recent],
        )


class Proposal(Model):
    id: str
    proposalId: str = Field(description="The same as id")
    resourceType: Literal["topic"]
    resourceId: str = Field(description="The topic's id")
    sectionId: str
    status: ProposalStatus = Field(
        description="objected: paused by an objection under a PACT approval policy, for a reviewer to "
        "decide; withdrawn: by its author while pending"
    )
    summary: str
    newContent: Annotated[str, AsWritten()]
    citations: list[str]
    proposalType: str | None
    baseVersion: int = Field(description="The topic version the proposal was made against")
    authorId: str
    authorName: str
    ttl: int = Field(description="Seconds from creation to the TTL decision")
    approveCount: int
    rejectCount: int
    objectCount: int
    createdAt: Timestamp
    expiresAt: Timestamp
    resolvedAt: Timestamp | None

    @classmethod
    def of(cls, p: consensus_models.Proposal) -> Proposal:
        return cls(**cls.fields(p))

    @staticmethod
    def fields(p: consensus_models.Proposal) -> dict[str, Any]:
        """A proposal's wire names, for this model and those that extend it."""
        return {
            "id": p.id,
            "proposalId": p.id,
            "resourceType": p.resource_type,
            "resourceId": p.resource_id,
            "sectionId": p.section_id,
            "status": p.status,
            "summary": p.summary,
            "newContent": p.new_content,
            "citations": p.citations or [],
            "proposalType": p.proposal_type,
            "baseVersion": p.base_version,
            "authorId": p.author_id,
            "authorName": p.author_name,
            "ttl": p.ttl_seconds,
            "approveCount": p.approve_count,
            "rejectCount": p.reject_count,
            "objectCount": p.object_count,
            "createdAt": iso(p.created_at),
            "expiresAt": iso(p.expires_at),
            "resolvedAt": iso(p.resolved_at),
        }


class ProposalPage(Model):
    topicId: str
    proposals: list[Proposal] = Field(description="Newest first")
    total: int
    limit: int
    offset: int

    @classmethod
    def of(cls, topic_id: str, page: engine.ProposalPage) -> ProposalPage:
        proposals = [Proposal.of(p) for p in page.proposals]
        return cls(
            topicId=topic_id, proposals=proposals, total=page.total, limit=page.limit, offset=page.offset
        )


class ProposalVoteRecord(Model):
    agentId: str
    agentName: str
    vote: VoteKindField
    reason: str | None
    createdAt: Timestamp

    @classmethod
    def of(cls, v: consensus_models.ProposalVote) -> ProposalVoteRecord:
        return cls(
            agentId=v.agent_id,
            agentName=v.agent_name,
            vote=VoteKind(v.kind),
            reason=v.reason,
            createdAt=iso(v.created_at),
        )


class ProposalDetail(Proposal):
    votes: list[ProposalVoteRecord]

    @classmethod
    def of_votes(cls, found: engine.ProposalWithVotes) -> ProposalDetail:
        votes = [ProposalVoteRecord.of(v) for v in found.votes]
        return cls(**Proposal.fields(found.proposal), votes=votes)


class VoteOutcome(Model):
    proposalId: str
    vote: VoteKindField
    status: ProposalStatus = Field(description="The proposal's status after this vote")
    approveCount: int
    rejectCount: int
    objectCount: int
    requiredApprovals: int
    remainingApprovals: int = Field(description="Approvals (net of objections) still needed to merge")
    policy: str = Field(
        description="multi-approval when the topic's approval policy is concord-default, else that policy"
    )

    @classmethod
    def of(cls, cast: engine.VoteCast) -> VoteOutcome:
        p = cast.proposal
        return cls(
            proposalId=p.id,
            vote=VoteKind(cast.vote),
            status=ProposalStatus(p.status),
            approveCount=p.approve_count,
            rejectCount=p.reject_count,
            objectCount=p.object_count,
            requiredApprovals=cast.required_approvals,
            remainingApprovals=cast.remaining_approvals,
            policy=cast.policy,
        )


class TopicVoteTally(Model):
    approve: int
    reject: int
    need_info: int

    @classmethod
    def of(cls, tally: dict[str, int]) -> TopicVoteTally:
        return cls.model_validate(tally)


class TopicVoteRecord(Model):
    agentId: str
    agentName: str
    vote: Annotated[TopicVoteKind, SpeltOut(TopicVoteKind)]
    reason: str | None
    dependencyTopicId: str | None = Field(description="The prerequisite a need_info vote linked or created")
    createdAt: Timestamp

    @classmethod
    def of(cls, v: topic_models.TopicVote, agent_name: str) -> TopicVoteRecord:
        return cls(
            agentId=v.agent_id,
            agentName=agent_name,
            vote=TopicVoteKind(v.vote),
            reason=v.reason,
            dependencyTopicId=v.dependency_topic_id,
            createdAt=iso(v.created_at),
        )


class TopicVotes(Model):
    topicId: str
    status: TopicStatus
    tally: TopicVoteTally
    approvalsNeeded: int
    votes: list[TopicVoteRecord]

    @classmethod
    def of(cls, found: TopicVotesFound) -> TopicVotes:
        return cls(
            topicId=found.topic.id,
            status=TopicStatus(found.topic.status),
            tally=TopicVoteTally.of(found.tally),
            approvalsNeeded=found.approvals_needed,
            votes=[TopicVoteRecord.of(v, name) for v, name in found.votes],
        )


class TopicVoteResult(Model):
    topicId: str
    vote: Annotated[TopicVoteKind, SpeltOut(TopicVoteKind)]
    status: TopicStatus = Field(description="The topic's status after this vote")
    tally: TopicVoteTally
    approvalsNeeded: int
    dependencyTopicId: str | None

    @classmethod
    def of(cls, cast: TopicVoteCast) -> TopicVoteResult:
        return cls(
            topicId=cast.topic.id,
            vote=cast.vote,
            status=TopicStatus(cast.topic.status),
            tally=TopicVoteTally.of(cast.tally),
            approvalsNeeded=cast.approvals_needed,
            dependencyTopicId=cast.dependency_topic_id,
        )


class DoneResult(DoneOut):
    topicId: str
    assumptions: list[str] = Field(description="The assumptions the agent declared with its signals")
    topicStatus: TopicStatus = Field(description="The topic's status after the signal")

    @classmethod
    def of(cls, done: TopicDone) -> DoneResult:
        return cls(
            **DoneOut.fields(done.signal),
            topicId=done.signal.resource_id,
            assumptions=done.assumptions,
            topicStatus=TopicStatus(done.topic_status),
        )
