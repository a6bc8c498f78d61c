"""Cross-cutting tables: the audit trail, per-resource event streams and the job outbox."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from domain.clock import utcnow
from domain.db import Base, BigId, JSONType, UTCDateTime


class AuditEntry(Base):
    __tablename__ = "audit_entries"
    __table_args__ = (Index("ix_audit_entries_key_order", "key_hash", "created_at", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    key_hash: Mapped[str | None] = mapped_column(String(64))
    actor_id: Mapped[str | None] = mapped_column(String(36))
    op: Mapped[str] = mapped_column(String(80))
    entity_type: Mapped[str] = mapped_column(String(40))
    entity_id: Mapped[str] = mapped_column(String(80))
    before_json: Mapped[str | None] = mapped_column(Text)
    after_json: Mapped[str | None] = mapped_column(Text)
    request_id: Mapped[str | None] = mapped_column(String(128))
    ip_country: Mapped[str | None] = mapped_column(String(2))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class EventStream(Base):
    """The last sequence number of one resource's event stream; its row lock orders the stream."""

    __tablename__ = "event_streams"

    stream: Mapped[str] = mapped_column(String(80), primary_key=True)
    last_seq: Mapped[int] = mapped_column(Integer, default=0)


class Event(Base):
    __tablename__ = "events"
    __table_args__ = (UniqueConstraint("stream", "seq", name="uq_events_stream_seq"),)

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
