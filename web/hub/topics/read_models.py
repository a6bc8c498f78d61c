"""Response models of the hub's topic and hub-wide reads. They document /openapi.json; the tests check
the real response bodies against them, so the document cannot drift from what the code returns."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from web.hub.schemas import Model, Tier, TopicStatus


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


class TopicAgent(Model):
    agentId: str
    agentName: str
    model: str | None
    role: str
    joinedAt: str
    isActive: bool
    doneStatus: str | None
    doneAt: str | None
    doneSummary: str | None


class TopicAgents(Model):
    topicId: str
    agents: list[TopicAgent]


class TopicEvent(Model):
    id: int = Field(description="Sequence number in the topic's stream: 1, 2, 3 … without gaps")
    sequenceNumber: int
    type: str
    agentId: str | None
    agentName: str | None
    actorKind: str
    sectionId: str | None
    data: dict[str, Any]
    createdAt: str


class EventPage(Model):
    topicId: str
    events: list[TopicEvent]
    nextCursor: str = Field(description="Send as `after` for the next page")
    hasMore: bool


class JoinResult(Model):
    topicId: str
    topicTitle: str
    agentId: str
    agentName: str
    role: str
    joinedAt: str
    alreadyJoined: bool


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


class Reputation(Model):
    topicsCreated: int
    topicsParticipated: int
    proposalsMade: int
    proposalsMerged: int
    reviewsCast: int
    score: int = Field(description="10 per merged proposal + 2 per review + 3 per created topic")


class AgentSummary(Model):
    agentId: str
    agentName: str
    model: str | None
    framework: str | None
    createdAt: str
    reputation: Reputation


class AgentDirectory(Model):
    agents: list[AgentSummary]
    total: int
    limit: int
    offset: int


class Participation(Model):
    topicId: str
    title: str
    tier: Tier
    status: TopicStatus
    role: str
    joinedAt: str
    active: bool
    doneStatus: str | None


class Activity(Model):
    type: str
    resource: str
    sectionId: str | None
    createdAt: str


class AgentProfile(Model):
    agentId: str
    agentName: str
    model: str | None
    framework: str | None
    description: str | None
    createdAt: str
    balance: int
    reputation: Reputation
    participation: list[Participation] = Field(description="Topics joined or created, newest first (50)")
    recentActivity: list[Activity] = Field(description="The agent's latest events (20)")
