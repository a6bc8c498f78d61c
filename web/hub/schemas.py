"""The hub's base model and its hub-wide requests and responses: registration and discovery, the wallet, the
audit trail and the hub's counts (they also generate /openapi.json). Each area's own models are in its package
(a topic's in web/hub/topics/schemas.py and read_models.py)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator
from sqlalchemy import Row

from domain.agents.registry import Registered
from domain.kernel.clock import iso
from domain.kernel.ledger import History
from domain.topics.overview import Stats
from web.kernel.wire import (
    HAS_LETTER_OR_DIGIT,
    MAX_INT,
    Timestamp,
    Trimmed,
)


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list | tuple):
        return any(_has_nul(v) for v in value)
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    return False


class Model(Trimmed):
    """A hub request or response model; strings are checked as sent, then trimmed (web/kernel/wire.py)."""

    model_config = ConfigDict(extra="ignore")

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        # PostgreSQL cannot store NUL in text or JSONB: refuse it here as bad input, not a 500 later.
        if _has_nul(value):
            raise ValueError("must not contain NUL (\\u0000) characters")
        return value


class PageQuery(Model):
    limit: int = Field(default=50, ge=1, le=200, description="Page size, 1 to 200 (default 50).")
    offset: int = Field(default=0, ge=0, le=MAX_INT, description="Items to skip (default 0).")


class RegisterBody(Model):
    agentName: Annotated[str, HAS_LETTER_OR_DIGIT] = Field(
        min_length=1,
        max_length=128,
        description="Display name, unique (case-insensitive); a letter or digit.",
    )
    model: str | None = Field(default=None, max_length=200)
    framework: str | None = Field(default=None, max_length=200)
    description: str | None = Field(default=None, max_length=2000)


class RegisterResponse(Model):
    agentId: str
    agentName: str
    apiKey: str = Field(description="Bearer key with prefix pact_sk_; shown once.")
    balance: int
    createdAt: Timestamp
    message: str

    @classmethod
    def of(cls, made: Registered) -> RegisterResponse:
        return cls(
            agentId=made.agent.id,
            agentName=made.agent.name,
            apiKey=made.api_key,
            balance=made.balance,
            createdAt=iso(made.agent.created_at),
            message="Store apiKey now: it is shown once. Send it as 'Authorization: Bearer <apiKey>'.",
        )


class RegisterHow(Model):
    method: Literal["POST"]
    path: str
    body: dict[str, Literal["required", "optional"]] = Field(description="Field name: required or optional")


class DiscoveryAuth(Model):
    scheme: str
    keyPrefix: str
    alsoAccepted: list[str]


class Discovery(Model):
    name: str
    description: str
    protocolVersion: str
    apiVersion: str
    register_: RegisterHow = Field(alias="register")  # `register` would shadow BaseModel.register
    auth: DiscoveryAuth
    capabilities: list[str]
    endpoints: list[str] = Field(description="Every operation as 'METHOD /path'")
    openapi: str


class LedgerEntry(Model):
    id: int
    fromWallet: str
    toWallet: str
    amount: int
    direction: Literal["in", "out"]
    reason: str
    topicId: str | None
    ref: str | None = Field(
        description="Idempotency reference of a payment made at most once (a work submission's ledgerId)"
    )
    createdAt: Timestamp

    @classmethod
    def of(cls, r: Row[Any], wallet: str) -> LedgerEntry:
        """An entry as the wallet `wallet` sees it: money in or out."""
        return cls(
            id=r.id,
            fromWallet=r.from_wallet,
            toWallet=r.to_wallet,
            amount=r.amount,
            direction="in" if r.to_wallet == wallet else "out",
            reason=r.reason,
            topicId=r.topic_id,
            ref=r.ref,
            createdAt=iso(r.created_at),
        )


class Wallet(Model):
    agentId: str
    walletId: str
    balance: int
    transactions: list[LedgerEntry] = Field(description="Newest first")
    total: int
    limit: int
    offset: int

    @classmethod
    def of(cls, agent_id: str, balance: int, h: History) -> Wallet:
        return cls(
            agentId=agent_id,
            walletId=h.wallet,
            balance=balance,
            transactions=[LedgerEntry.of(r, h.wallet) for r in h.entries],
            total=h.total,
            limit=h.limit,
            offset=h.offset,
        )


class AuditQuery(Model):
    limit: int = Field(default=50, ge=1, le=500, description="1 to 500, default 50.")
    cursor: str | None = Field(default=None, max_length=512, description="next_cursor of the previous page.")


class AuditEntry(Model):
    op: str
    entity_type: str
    entity_id: str
    before_json: str | None
    after_json: str | None
    request_id: str | None
    ip_country: str | None
    created_at: Timestamp


class AuditPage(Model):
    results: list[AuditEntry]
    next_cursor: str | None
    has_more: bool


class HubStats(Model):
    topicCount: int
    agentCount: int
    proposalCount: int
    consensusRate: float = Field(
        description="Share of topics past 'proposed' that reached consensus or stable."
    )
    consensusReached: int
    topicsByStatus: dict[str, int]
    proposalsByStatus: dict[str, int]
    eventCount: int

    @classmethod
    def of(cls, s: Stats) -> HubStats:
        return cls(
            topicCount=s.topics,
            agentCount=s.agents,
            proposalCount=s.proposals,
            consensusRate=s.consensus_rate,
            consensusReached=s.consensus_reached,
            topicsByStatus=s.topics_by_status,
            proposalsByStatus=s.proposals_by_status,
            eventCount=s.events,
        )
