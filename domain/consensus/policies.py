"""Approval policies: how a resource's proposals become merged, rejected or paused (PACT v2.0.3 §5, §10.4,
§10.5, §10.7), as pure rules the engine applies.

Each topic and document carries one policy and the `allowSelfApproval` flag. `concord-default` is the seed's
rule (DESIGN.md "Consensus": two approvals, or every voter when fewer; an objection outweighed by an approval
on topics, pausing a document proposal; at its TTL a proposal with an approval and nothing against it merges);
the others are PACT's:

- `single`, `majority`, `unanimous`: approvals from eligible agents are counted against a threshold (one,
  more than half, all); a proposal is rejected once the rejections leave too few agents to reach it; silence
  is not consent, so at its TTL an undecided proposal expires.
- `objection-based`: silence is consent. At its TTL a pending proposal merges (`pact.proposal.auto-merged`);
  it merges at once when nobody is in its window (every other eligible agent scored the section 0).
- `auto`: merges on creation.
- `human-only`: agents propose; only a person approves or rejects (the proposal waits for one, TTL or not).

Under every PACT policy an objection pauses the proposal (`objected`, for a person to decide) and, under the
two silent ones, a rejection ends it (any agent may veto). An eligible agent that scored the section 10 must
approve explicitly before a silent policy merges (§10.4/10.5); one that has not done so by the abstention
deadline (`ABSTENTION_FACTOR` × the TTL after creation) is treated as scoring 5 for that proposal (§10.7) and
no longer holds it back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Protocol


class ApprovalPolicy(StrEnum):
    CONCORD_DEFAULT = "concord-default"
    OBJECTION_BASED = "objection-based"
    SINGLE = "single"
    MAJORITY = "majority"
    UNANIMOUS = "unanimous"
    HUMAN_ONLY = "human-only"
    AUTO = "auto"


DEFAULT = ApprovalPolicy.CONCORD_DEFAULT
# Policies that count approvals against a threshold: the only ones where an author's approval can count.
COUNTED = frozenset({ApprovalPolicy.SINGLE, ApprovalPolicy.MAJORITY, ApprovalPolicy.UNANIMOUS})
# Policies under which silence is consent.
SILENT = frozenset({ApprovalPolicy.OBJECTION_BASED, ApprovalPolicy.AUTO})

CRITICAL_SALIENCE = 10  # must approve explicitly before a silent merge (§10.4)
DEMOTED_SALIENCE = 5  # what an abstaining critical agent counts as once its deadline has passed (§10.7)
ABSTENTION_FACTOR = 4  # the abstention deadline, in TTLs after the proposal's creation (§10.7)


class Outcome(StrEnum):
    """What a vote or a TTL makes of a pending proposal (None: it stays pending)."""

    ACCEPTED = "accepted"  # merge now
    REJECTED = "rejected"
    OBJECTED = "objected"  # paused for a person
    EXPIRED = "expired"
    UNLESS_CRITICAL = "unless-critical"  # merge unless an agent with salience 10 still has to approve
    WAITS = "waits"  # for a person: the TTL does not end it


@dataclass(frozen=True)
class Approval:
    """A resource's approval policy and its self-approval flag."""

    policy: ApprovalPolicy = DEFAULT
    allow_self_approval: bool = False

    @property
    def author_votes(self) -> bool:
        """Whether the author is one of the voters on its own proposal (and its approval counts)."""
        return self.allow_self_approval and self.policy in COUNTED


DEFAULT_APPROVAL = Approval()


class HasApproval(Protocol):
    """A resource row (a Topic, a Document) with the two columns."""

    approval_policy: str
    allow_self_approval: bool


def of(row: HasApproval) -> Approval:
    return Approval(ApprovalPolicy(row.approval_policy), bool(row.allow_self_approval))


def default_needed(eligible: int) -> int:
    """The seed's rule: two approvals, or every eligible voter when fewer, at least one."""
    return max(1, min(2, eligible))


def required(approval: Approval, eligible: int) -> int:
    """Approvals a proposal needs from `eligible` voters (0: it needs none)."""
    match approval.policy:
        case ApprovalPolicy.CONCORD_DEFAULT:
            return default_needed(eligible)
        case ApprovalPolicy.SINGLE:
            return 1
        case ApprovalPolicy.MAJORITY:
            return eligible // 2 + 1
        case ApprovalPolicy.UNANIMOUS:
            return max(1, eligible)
        case _:
            return 0


@dataclass(frozen=True)
class Tally:
    approve: int
    reject: int
    object: int


def after_vote(approval: Approval, tally: Tally, eligible: int, *, window_over: bool) -> Outcome | None:
    """A PACT policy's outcome after a vote (the default's stays with the resource type's rule).
    `window_over`: the proposal's TTL has run out (it is still pending because a critical agent held it)."""
    if tally.object > 0:
        return Outcome.OBJECTED
    if approval.policy in SILENT:
        if tally.reject > 0:
            return Outcome.REJECTED
        if approval.policy is ApprovalPolicy.AUTO or window_over:
            return Outcome.UNLESS_CRITICAL
        return None
    needed = required(approval, eligible)
    if tally.approve >= needed:
        return Outcome.ACCEPTED
    if tally.reject > eligible - needed:  # too few agents left to reach the threshold
        return Outcome.REJECTED
    return None


def at_ttl(approval: Approval, tally: Tally) -> Outcome:
    """What the TTL sweep does with a pending proposal whose TTL has run out."""
    match approval.policy:
        case ApprovalPolicy.CONCORD_DEFAULT:
            consent = tally.approve >= 1 and tally.reject == 0 and tally.object == 0
            return Outcome.ACCEPTED if consent else Outcome.EXPIRED
        case ApprovalPolicy.OBJECTION_BASED | ApprovalPolicy.AUTO:
            return Outcome.UNLESS_CRITICAL
        case ApprovalPolicy.HUMAN_ONLY:
            return Outcome.WAITS
        case _:
            return Outcome.EXPIRED


def abstention_deadline(created_at: datetime, ttl_seconds: int) -> datetime:
    return created_at + timedelta(seconds=ABSTENTION_FACTOR * ttl_seconds)
