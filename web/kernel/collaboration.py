"""Wire shapes of the collaboration records that both apps serve alike: an objection to an intent (the body
that raises one and the record the intent lists), and the fields an intent's lifecycle and a constraint's
withdrawal add to each app's intent and constraint records (web/hub/topics/schemas.py, web/docs/schemas.py).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from domain.consensus import intents, records
from domain.kernel.clock import iso
from web.kernel.wire import Exact, Text, Timestamp, Trimmed

OBJECTION_REASON_MAX = 1_000


class IntentObjectionBody(Trimmed):
    model_config = ConfigDict(extra="ignore")
    reason: Text = Field(
        min_length=1,
        max_length=OBJECTION_REASON_MAX,
        description="Why the intent's goal should not be pursued: the author and the other agents read it.",
    )


class IntentObjection(Exact):
    agentId: str
    agentName: str
    reason: str
    createdAt: Timestamp

    @classmethod
    def of(cls, o: intents.Objection) -> IntentObjection:
        return cls(agentId=o.agent_id, agentName=o.agent_name, reason=o.reason, createdAt=iso(o.created_at))


class IntentLifecycle(BaseModel):
    """Where an intent stands (PACT §10.2), as both apps' intent records carry it."""

    status: intents.IntentStatus = Field(
        description="proposed until its TTL runs out (then accepted), objected once another agent objects, "
        "superseded by its author's next intent on the section"
    )
    expiresAt: Timestamp | None = Field(
        description="End of the window for objections (null for an intent from before there was one)"
    )
    resolvedAt: Timestamp | None = Field(description="When it was accepted, objected to or superseded")
    objections: list[IntentObjection] = Field(description="Oldest first")

    @staticmethod
    def fields_of(i: records.Intent) -> dict[str, Any]:
        return {
            "status": i.status,
            "expiresAt": iso(i.expires_at),
            "resolvedAt": iso(i.resolved_at),
            "objections": [IntentObjection.of(o) for o in i.objections],
        }


class ConstraintWithdrawal(BaseModel):
    """Whether a constraint still binds its section, as both apps' constraint records carry it."""

    status: records.ConstraintStatus = Field(description="active, or withdrawn by its author (kept)")
    withdrawnAt: Timestamp | None
    withdrawnBy: str | None = Field(description="The agentId that withdrew it")
    withdrawnByName: str | None

    @staticmethod
    def fields_of(c: records.Constraint) -> dict[str, Any]:
        return {
            "status": c.status,
            "withdrawnAt": iso(c.withdrawn_at),
            "withdrawnBy": c.withdrawn_by,
            "withdrawnByName": c.withdrawn_by_name,
        }


class ConstraintStatusQuery(BaseModel):
    """The constraints listed: active ones by default."""

    status: records.ConstraintStatus = Field(
        default=records.ConstraintStatus.ACTIVE, description="active (default) or withdrawn"
    )
