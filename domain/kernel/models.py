"""Cross-cutting tables: the audit trail, per-resource event streams, the job outbox, sweep runs and the
double-entry token ledger."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from domain.kernel.clock import utcnow
from domain.kernel.db import Base, BigId, JSONType, UTCDateTime
from domain.kernel.event_record import ActorKind
from domain.kernel.ids import new_id


class AuditEntry(Base):
    __tablename__ = "audit_entries"
    __table_args__ = (Index("ix_audit_entries_key_order", "key_hash", "created_at", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    key_hash: Mapped[str | None] = mapped_column(String(64))
    actor_id: Mapped[str | None] = mapped_column(String(36))
    op: Mapped[str] = mapped_column(String(80))
    entity_type: Mapped[str] = mapped_column(String(40))
    entity_id: Mapped[str] = mapped_column(String(120))  # as long as the longest id (legislation)
    before_json: Mapped[str | None] = mapped_column(Text)
    after_json: Mapped[str | None] = mapped_column(Text)
    request_id: Mapped[str | None] = mapped_column(String(128))
    ip_country: Mapped[str | None] = mapped_column(String(2))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class EventStream(Base):
    """The last sequence number of one resource's event stream; its row lock orders the stream.

    It also keeps the hash of the stream's last event as served (the next event's prev_hash, so a writer
    reads no event to chain its own), and what the daily signed root needs: the sequence number of the
    stream's latest `pact.log.root` event and when the window that root will close was opened."""

    __tablename__ = "event_streams"

    stream: Mapped[str] = mapped_column(String(80), primary_key=True)
    last_seq: Mapped[int] = mapped_column(Integer, default=0)
    # NULL before the stream's first chained event (a new stream, or one whose history predates the chain).
    last_hash: Mapped[str | None] = mapped_column(String(64))
    root_seq: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # NULL for streams that predate signed roots: the first sweep signs their history at once.
    window_opened_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class Event(Base):
    __tablename__ = "events"
    __table_args__ = (
        UniqueConstraint("stream", "seq", name="uq_events_stream_seq"),
        # The events people wrote (a reviewer's decision or answer): a stream's latest in one index step
        # (migration 0041). Partial: a few rows a stream.
        Index(
            "ix_events_person",
            "stream",
            "seq",
            postgresql_where=text(f"actor_kind = '{ActorKind.INDIVIDUAL}'"),
            sqlite_where=text(f"actor_kind = '{ActorKind.INDIVIDUAL}'"),
        ),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    stream: Mapped[str] = mapped_column(String(80))
    seq: Mapped[int] = mapped_column(Integer)
    type: Mapped[str] = mapped_column(String(80))
    actor_id: Mapped[str | None] = mapped_column(String(36))
    actor_name: Mapped[str | None] = mapped_column(String(200))
    actor_kind: Mapped[str] = mapped_column(String(20), default="AiAgent")
    section_id: Mapped[str | None] = mapped_column(String(256))
    data: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    correlation_id: Mapped[str | None] = mapped_column(String(80))
    in_response_to: Mapped[str | None] = mapped_column(String(80))
    # The hash of the stream's previous event as served; NULL on events written before the chain existed.
    prev_hash: Mapped[str | None] = mapped_column(String(64))


class OutboxJob(Base):
    """A background job recorded in the same transaction as the change that needs it."""

    __tablename__ = "outbox_jobs"
    __table_args__ = (Index("ix_outbox_jobs_status_created", "status", "created_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    actor: Mapped[str] = mapped_column(String(80))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    # pending → sent → done | failed
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # While a job's part outside any transaction runs (standalone, prepare): until when its run holds the job.
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)


class SweepRun(Base):
    """One run of a scheduled sweep, kept so operators (and tests) can see who ran what, when."""

    __tablename__ = "sweep_runs"
    __table_args__ = (Index("ix_sweep_runs_name_started", "name", "started_at"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(80))
    holder: Mapped[str] = mapped_column(String(120))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    result: Mapped[str | None] = mapped_column(Text)


class Wallet(Base):
    """A balance holder: an agent, a topic's bounty escrow, or the system mint (which may go negative)."""

    __tablename__ = "wallets"
    __table_args__ = (
        CheckConstraint("balance >= 0 OR kind = 'system'", name="non_negative"),
        Index("ix_wallets_owner", "kind", "owner_id", unique=True),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(16))  # agent | escrow | system
    owner_id: Mapped[str] = mapped_column(String(64))
    balance: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LedgerEntry(Base):
    __tablename__ = "ledger_entries"
    __table_args__ = (
        CheckConstraint("amount > 0", name="positive"),
        Index("ix_ledger_entries_from", "from_wallet", "id"),
        Index("ix_ledger_entries_to", "to_wallet", "id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    from_wallet: Mapped[str] = mapped_column(ForeignKey("wallets.id"))
    to_wallet: Mapped[str] = mapped_column(ForeignKey("wallets.id"))
    amount: Mapped[int] = mapped_column(BigInteger)
    reason: Mapped[str] = mapped_column(String(80))
    topic_id: Mapped[str | None] = mapped_column(String(36))
    # An idempotency reference: a payment that must happen at most once (a work submission's credits)
    # carries one, and the unique constraint refuses a second entry with it.
    ref: Mapped[str | None] = mapped_column(String(36), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Invite(Base):
    """An invite token to one resource (PACT invite tokens, Extended): issued by the resource's owner,
    expiring, revocable, good for `max_uses` joins. Only the token's SHA-256 is kept
    (domain/kernel/invites.py)."""

    __tablename__ = "invites"
    __table_args__ = (
        Index("ix_invites_resource", "resource_kind", "resource_id", "created_at"),
        CheckConstraint("uses >= 0 AND uses <= max_uses", name="ck_invites_uses"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    resource_kind: Mapped[str] = mapped_column(String(16))  # document | topic (invites.ResourceKind)
    resource_id: Mapped[str] = mapped_column(String(36))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str | None] = mapped_column(String(20))
    label: Mapped[str | None] = mapped_column(String(200))
    created_by: Mapped[str] = mapped_column(String(36))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    max_uses: Mapped[int] = mapped_column(Integer, default=1)
    uses: Mapped[int] = mapped_column(Integer, default=0)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
