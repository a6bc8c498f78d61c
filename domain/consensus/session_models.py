"""Tables of PACT v2.0.3 session awareness (§4.4, §6.5), shared by topics and documents: pending
obligations, each member's presence and read cursor on a resource, and heartbeat receipts (the
idempotency record of `POST /_heartbeat`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from domain.kernel.clock import utcnow
from domain.kernel.db import Base, JSONType, UTCDateTime
from domain.kernel.ids import new_id


class PendingObligation(Base):
    """Something the protocol expects one member of a resource to do next (§6.5): open while
    `discharged_at` is null. `event_ref` names what created it (a proposal's id for a vote)."""

    __tablename__ = "pact_obligations"
    __table_args__ = (
        UniqueConstraint("kind", "event_ref", "member_id", name="uq_pact_obligations_owed"),
        Index("ix_pact_obligations_open", "resource_type", "resource_id", "discharged_at"),
        Index("ix_pact_obligations_proposal", "proposal_id"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    resource_type: Mapped[str] = mapped_column(String(20))
    resource_id: Mapped[str] = mapped_column(String(36))
    member_id: Mapped[str] = mapped_column(String(36))
    kind: Mapped[str] = mapped_column(String(16))
    event_ref: Mapped[str] = mapped_column(String(80))
    proposal_id: Mapped[str | None] = mapped_column(String(36))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    due_by: Mapped[datetime | None] = mapped_column(UTCDateTime)
    discharged_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    discharge_kind: Mapped[str | None] = mapped_column(String(16))
    discharge_event_ref: Mapped[str | None] = mapped_column(String(80))
    # The principal the owing member acts for, as it was when the obligation arose (migration 0036; NULL on
    # older rows: the member's own urn).
    principal_id: Mapped[str | None] = mapped_column(String(255))


class SessionPresence(Base):
    """A member's liveness and read cursor on a resource: when it last heartbeated, whether it asked for
    attention, and the high-water mark of the events it acknowledged (`POST /mark-read`)."""

    __tablename__ = "pact_presence"
    __table_args__ = (
        UniqueConstraint("resource_type", "resource_id", "member_id", name="uq_pact_presence_member"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    resource_type: Mapped[str] = mapped_column(String(20))
    resource_id: Mapped[str] = mapped_column(String(36))
    member_id: Mapped[str] = mapped_column(String(36))
    last_seen: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_heartbeat_seq: Mapped[int | None] = mapped_column(Integer)
    attention_required: Mapped[bool] = mapped_column(Boolean, default=False)
    read_from_seq: Mapped[int | None] = mapped_column(Integer)
    read_to_seq: Mapped[int] = mapped_column(Integer, default=0)
    read_event_seq: Mapped[int | None] = mapped_column(Integer)
    read_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The member's session profile, recorded when it joins (migration 0036): the principal its key acts for,
    # the PACT role it declared on onboarding, and the contact metadata it gave.
    principal_id: Mapped[str | None] = mapped_column(String(255))
    pact_role: Mapped[str | None] = mapped_column(String(16))
    contact: Mapped[dict[str, str] | None] = mapped_column(JSONType)


class HeartbeatReceipt(Base):
    """The answer given to a member's heartbeat, kept so that a repeat of the same `client_heartbeat_id`
    within the idempotency window gets the same answer and records nothing."""

    __tablename__ = "pact_heartbeats"
    __table_args__ = (
        UniqueConstraint(
            "resource_type", "resource_id", "member_id", "client_heartbeat_id", name="uq_pact_heartbeats_key"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    resource_type: Mapped[str] = mapped_column(String(20))
    resource_id: Mapped[str] = mapped_column(String(36))
    member_id: Mapped[str] = mapped_column(String(36))
    client_heartbeat_id: Mapped[str] = mapped_column(String(80))
    received_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    response: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
