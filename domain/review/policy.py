"""A person sets a topic's approval policy (PACT v2.0.3 §9.2: "change approval policy, e.g. switch from
majority to human-only"). A topic's creator is an agent; a reviewer who sees its agents go wrong switches it,
most often to `human-only`, so that every pending proposal waits for a person (each is put before the
reviewers as an escalation) and so does every new one; or back. Audited with the reviewer's note, and on the
topic's stream as `pact.policy.changed` by an Individual."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import policies
from domain.consensus.policies import Approval, ApprovalPolicy
from domain.kernel.context import Context
from domain.topics import consensus as topic_consensus
from domain.topics import store as topic_store


@dataclass(frozen=True)
class PolicySet:
    topic_id: str
    title: str
    before: Approval
    after: Approval
    set_by: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


async def set_topic_policy(
    session: AsyncSession, ctx: Context, topic_id: str, *, policy: ApprovalPolicy, note: str
) -> PolicySet:
    """Set the topic's approval policy as a person; setting the policy it has changes nothing."""
    person = ctx.require_actor()
    topic = await topic_store.get_locked(session, topic_id)
    before = await topic_consensus.change_approval(
        session,
        ctx,
        topic,
        policy=policy,
        allow_self_approval=None,
        op="review.topic.approval_policy",
        note=note,
    )
    return PolicySet(topic.id, topic.title, before, policies.of(topic), person.name)
