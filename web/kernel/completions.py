"""The wire of done signals on both apps (PACT v2.0.3 §7.1 `POST /done`, `GET /completions`): what a
signal answers and how completions are listed, from the domain's results (domain/consensus/completions.py).
Each app's done answer adds its resource's fields to `DoneOut`."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from domain.consensus import completions as shared
from domain.consensus.completions import CompletionStatus
from domain.consensus.phases import Phase
from domain.kernel.clock import iso
from web.kernel.wire import Exact, Timestamp

STATUS_TEXT = (
    "aligned (agrees with the resource as it stands), dissenting (disagrees with the outcome), partial (did "
    "some of its work), abstained (takes no further part); abstain is the hub's older word for abstained"
)
SUMMARY_TEXT = "What the agent did, or why it stands where it does; a later signal without one clears it."


class CompletionOut(Exact):
    agentId: str
    agentName: str
    status: CompletionStatus
    summary: str | None
    completedAt: Timestamp = Field(description="When the agent last signalled")
    isActive: bool = Field(description="Whether the agent is still joined")

    @classmethod
    def of(cls, c: shared.Completion) -> CompletionOut:
        return cls(
            agentId=c.agent_id,
            agentName=c.agent_name,
            status=c.status,
            summary=c.summary,
            completedAt=iso(c.completed_at),
            isActive=c.active,
        )


class CompletionList(Exact):
    completions: list[CompletionOut] = Field(description="One per agent that signalled, oldest signal first")

    @classmethod
    def of(cls, found: shared.Completions) -> CompletionList:
        return cls(completions=[CompletionOut.of(c) for c in found.items])


class DoneOut(Exact):
    """A done signal as recorded: the agent's completion and the status it replaced."""

    agentId: str
    agentName: str
    status: CompletionStatus
    previousStatus: CompletionStatus | None = Field(
        description="The agent's status before; null the first time"
    )
    changed: bool = Field(description="Whether the status differs from the previous one")
    summary: str | None
    completedAt: Timestamp
    # PACT's /done answer (§7.1; the reference server's names): the resource, whom the agent acts for, and
    # the phase the resource is in after the signal.
    fabric_id: str
    principal_id: str | None = None
    done: bool = Field(description="Always true: the signal was recorded")
    phase: Phase | None = Field(default=None, description="The resource's phase after the signal (§4.4.1)")

    @staticmethod
    def fields(s: shared.Signal) -> dict[str, Any]:
        c = s.completion
        return {
            "fabric_id": s.resource_id,
            "principal_id": s.principal_id,
            "done": True,
            "phase": s.phase,
            "agentId": c.agent_id,
            "agentName": c.agent_name,
            "status": c.status,
            "previousStatus": s.previous,
            "changed": s.changed,
            "summary": c.summary,
            "completedAt": iso(c.completed_at),
        }
