"""Done signals: an agent says it has finished its work on a topic or a document, and where it stands on
the outcome (PACT v2.0.3 §7.1 `POST /done`, `GET /completions`; the hub's done signal of the seed spec).

One implementation serves both resources, as the records and the consensus engine do: a completion lives on
the agent's membership of the resource (a topic's participant row, a document's agent row), so an agent has
one completion per resource, which its next signal replaces. The area finds the membership (a joined agent
only) under the resource's row lock before calling in, so two signals of one agent at once are taken one
after the other: the first records `pact.agent.done`, the second `pact.agent.vote-changed` (the public hub's
names, which the hub served before documents had done signals).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus.phases import Phase
from domain.kernel import audit, events
from domain.kernel.clock import utcnow
from domain.kernel.context import Context

DONE = "pact.agent.done"
CHANGED = "pact.agent.vote-changed"
SUMMARY_MAX = 2000


class CompletionStatus(StrEnum):
    """How an agent finished (PACT's done-request.json), and the seed hub's `abstain`."""

    ALIGNED = "aligned"  # agrees with the resource as it stands
    DISSENTING = "dissenting"  # disagrees with the outcome
    PARTIAL = "partial"  # did some of its work, not all
    ABSTAINED = "abstained"  # chose not to take part further
    ABSTAIN = "abstain"  # the seed hub's word for abstained, kept as sent


class Member(Protocol):
    """A membership row that holds its agent's completion."""

    done_status: str | None
    done_summary: str | None
    done_at: datetime | None


@dataclass(frozen=True)
class Completion:
    agent_id: str
    agent_name: str
    status: CompletionStatus
    summary: str | None
    completed_at: datetime
    active: bool  # whether the agent is still a member of the resource


@dataclass(frozen=True)
class Completions:
    resource_type: str
    resource_id: str
    items: list[Completion]


@dataclass(frozen=True)
class Signal:
    """A done signal as just recorded, with the status it replaced (None for the agent's first)."""

    resource_type: str
    resource_id: str
    completion: Completion
    previous: CompletionStatus | None
    # Filled by the area after the signal (PACT's /done answer): whom the agent acts for, and where the
    # resource's negotiation stands now (domain/consensus/sessions.py `Phase`).
    principal_id: str | None = None
    phase: Phase | None = None

    @property
    def changed(self) -> bool:
        return self.previous != self.completion.status


async def signal(
    session: AsyncSession,
    ctx: Context,
    member: Member,
    *,
    resource_type: str,
    resource_id: str,
    status: CompletionStatus,
    summary: str | None,
) -> Signal:
    """Record the acting agent's completion on its membership `member` of the resource (the caller holds
    the resource's row lock), with its event and audit entry. A signal without a summary clears the earlier
    one."""
    actor = ctx.require_actor()
    previous = CompletionStatus(member.done_status) if member.done_status is not None else None
    now = utcnow()
    member.done_status = str(status)
    member.done_summary = summary
    member.done_at = now
    events.append(
        session,
        events.stream_of(resource_type, resource_id),
        DONE if previous is None else CHANGED,
        ctx,
        data={"status": str(status), "previousStatus": previous and str(previous), "summary": summary},
    )
    audit.record(
        session,
        ctx,
        f"{resource_type}.done",
        resource_type,
        resource_id,
        before={"status": previous and str(previous)},
        after={"status": str(status), "summary": summary},
    )
    completion = Completion(actor.id, actor.name, status, summary, now, active=True)
    return Signal(resource_type, resource_id, completion, previous)


def completion_of(member: Member, *, agent_id: str, agent_name: str, active: bool) -> Completion | None:
    """The completion a membership row holds, if its agent signalled one."""
    if member.done_status is None or member.done_at is None:
        return None
    return Completion(
        agent_id,
        agent_name,
        CompletionStatus(member.done_status),
        member.done_summary,
        member.done_at,
        active,
    )
