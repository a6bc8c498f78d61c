"""The stored data of a topic's events and audit entries, one function each: the events' data is hashed into
the topic's chain and the audit entries are kept as written, so their keys (camelCase, as the wire's) and
their order never change. Wire answers are built by the web models (web/hub/topics/), not here."""

from __future__ import annotations

from typing import Any

from domain.consensus.policies import Approval
from domain.kernel.clock import iso
from domain.kernel.invites import InviteView
from domain.topics.models import Topic, TopicComment, TopicDependency, TopicParticipant


def audit_view(topic: Topic) -> dict[str, Any]:
    """A stored format: the topic's audit snapshot (`topic.create`)."""
    return {
        "id": topic.id,
        "title": topic.title,
        "tier": topic.tier,
        "status": topic.status,
        "version": topic.version,
        "jurisdiction": topic.jurisdiction,
        "approvalPolicy": topic.approval_policy,
        "allowSelfApproval": topic.allow_self_approval,
    }


def approval(approval: Approval) -> dict[str, Any]:
    """A stored format: the `topic.approval_policy` audit entry's `before` and `after`."""
    return {"approvalPolicy": approval.policy.value, "allowSelfApproval": approval.allow_self_approval}


def registration(
    topic: Topic, agent_id: str, agent_name: str, role: str, joined_at: Any, already_joined: bool
) -> dict[str, Any]:
    """A stored format: the registration a `pact.fabric.onboarded` event carries (PACT §4.4.5), the join's
    answer as it was when the event was written (web JoinResult reads it back)."""
    return {
        "topicId": topic.id,
        "topicTitle": topic.title,
        "registrationId": agent_id,
        "agentId": agent_id,
        "agentName": agent_name,
        "role": role,
        "joinedAt": iso(joined_at),
        "alreadyJoined": already_joined,
    }


def joined(agent_id: str, role: str) -> dict[str, Any]:
    """A stored format: the `topic.join` audit entry's `after`."""
    return {"agentId": agent_id, "role": role}


def onboarded(agent_id: str, constraint_ids: list[str]) -> dict[str, Any]:
    """A stored format: the `topic.onboard` audit entry's `after`."""
    return {"agentId": agent_id, "constraintIds": constraint_ids}


def topic_voted(reason: str | None, dependency_topic_id: str | None) -> dict[str, Any]:
    """A stored format: the data of `pact.topic.vote.<kind>`."""
    return {"reason": reason, "dependencyTopicId": dependency_topic_id}


def dependency_unstable(topic_id: str) -> dict[str, Any]:
    """A stored format: the data of `pact.dependency.unstable`, on a dependant's stream."""
    return {"dependsOn": topic_id}


def stabilised(topic: Topic) -> dict[str, Any]:
    """A stored format: the data of `pact.topic.stable`."""
    return {"consensusSince": iso(topic.consensus_since)}


def dependency_declared(depends_on_id: str, relationship: str) -> dict[str, Any]:
    """A stored format: the data of `pact.dependency.declared`."""
    return {"dependsOn": depends_on_id, "relationship": relationship}


def dependency_added(edge: TopicDependency) -> dict[str, Any]:
    """A stored format: the `dependency.add` audit entry's `after`."""
    return {
        "topicId": edge.topic_id,
        "dependsOn": edge.depends_on_id,
        "relationship": edge.relationship,
        "justification": edge.justification,
    }


def invite(found: InviteView) -> dict[str, Any]:
    """A stored format: the data of `pact.invite.issued` / `.revoked` and their audit entries' `after`."""
    return {"inviteId": found.id, "maxUses": found.max_uses, "expiresAt": found.expires_at.isoformat()}


def comment_added(row: TopicComment) -> dict[str, Any]:
    """A stored format: the data of `pact.comment.added` on a topic."""
    return {
        "commentId": row.id,
        "sectionId": row.section_id,
        "content": row.content,
        "agentId": row.agent_id,
        "agentName": row.agent_name,
        "createdAt": iso(row.created_at),
    }


def removed(row: TopicParticipant) -> dict[str, Any]:
    """A stored format: the `pact.agent.left` event of an agent a reviewer removed (PACT §9.2's forced leave),
    as the document API records its own (domain/documents/agent_events.py); also the removal's audit entry
    (`after`), and what a readmission lifts (`before`)."""
    return {
        "role": row.role,
        "agentId": row.agent_id,
        "removedBy": row.removed_by,
        "reason": row.removal_note,
    }


def readmission(agent_id: str, note: str) -> dict[str, Any]:
    """A stored format: the `review.topic.agent_readmit` audit entry's `after`."""
    return {"agentId": agent_id, "note": note}
