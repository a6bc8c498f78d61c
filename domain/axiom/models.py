"""Axiom: commercial keys and their metering, and the legislation store."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import Date, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from domain.kernel.clock import utcnow
from domain.kernel.db import Base, BigId, JSONType, UTCDateTime
from domain.kernel.ids import new_id


class AxiomKey(Base):
    """A commercial key (pact_ax_…); only its SHA-256 is stored. Metering lives on the row so one
    conditional UPDATE both checks and spends the period's credits."""

    __tablename__ = "axiom_keys"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    owner_name: Mapped[str] = mapped_column(String(128))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    tier: Mapped[str] = mapped_column(String(20), default="free")
    monthly_credits: Mapped[int] = mapped_column(Integer)
    period: Mapped[str] = mapped_column(String(7))  # billing period "YYYY-MM" (UTC calendar month)
    period_queries: Mapped[int] = mapped_column(Integer, default=0)
    total_queries: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class AxiomUsageDay(Base):
    """Metered calls of one key on one UTC day (upserted atomically)."""

    __tablename__ = "axiom_usage_days"
    __table_args__ = (UniqueConstraint("key_id", "day", name="uq_axiom_usage_days_key_day"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    key_id: Mapped[str] = mapped_column(ForeignKey("axiom_keys.id", ondelete="CASCADE"))
    day: Mapped[date] = mapped_column(Date)
    queries: Mapped[int] = mapped_column(Integer, default=0)


class LegislationDoc(Base):
    """One instrument: an act, regulation, standard or guidance document."""

    __tablename__ = "legislation_docs"
    __table_args__ = (
        Index("ix_legislation_docs_jurisdiction_title", "jurisdiction", "title"),
        Index("ix_legislation_docs_type", "type"),
    )

    id: Mapped[str] = mapped_column(String(120), primary_key=True)
    jurisdiction: Mapped[str] = mapped_column(String(16))
    type: Mapped[str] = mapped_column(String(16))  # act | regulation | standard | guidance
    title: Mapped[str] = mapped_column(String(500))
    designation: Mapped[str | None] = mapped_column(String(120))  # standards: "AS/NZS 3000:2018"
    short_title: Mapped[str | None] = mapped_column(String(200))
    year: Mapped[int | None] = mapped_column(Integer)
    number: Mapped[str | None] = mapped_column(String(40))
    register_id: Mapped[str | None] = mapped_column(String(60))
    status: Mapped[str] = mapped_column(String(20), default="in_force")  # in_force | repealed | …
    in_force_date: Mapped[date | None] = mapped_column(Date)
    last_amended_date: Mapped[date | None] = mapped_column(Date)
    repealed_date: Mapped[date | None] = mapped_column(Date)
    administered_by: Mapped[str | None] = mapped_column(String(300))
    url: Mapped[str | None] = mapped_column(String(1000))
    fingerprint: Mapped[str | None] = mapped_column(String(64))  # SHA-256 of the ingested JSON
    # provenance: the register (Register), the file or URL read, the compilation's date, licence, attribution
    source_register: Mapped[str | None] = mapped_column(String(40))
    source: Mapped[str | None] = mapped_column(String(1000))
    version_date: Mapped[date | None] = mapped_column(Date)
    licence: Mapped[str | None] = mapped_column(String(60))
    attribution: Mapped[str | None] = mapped_column(String(1000))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LegislationSection(Base):
    __tablename__ = "legislation_sections"
    __table_args__ = (UniqueConstraint("doc_id", "section_id", name="uq_legislation_sections_doc_section"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    # Found by instrument through the unique constraint's index (doc_id first): no index of its own.
    doc_id: Mapped[str] = mapped_column(ForeignKey("legislation_docs.id", ondelete="CASCADE"))
    section_id: Mapped[str] = mapped_column(String(60))  # "s 19", "reg 5", "cl 1.1"
    title: Mapped[str] = mapped_column(String(500))
    content: Mapped[str | None] = mapped_column(Text)
    depth: Mapped[int] = mapped_column(Integer, default=1)
    parent_id: Mapped[str | None] = mapped_column(String(60))
    order: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(24), default="in_force")
    amended_by: Mapped[str | None] = mapped_column(String(300))
    notes: Mapped[str | None] = mapped_column(Text)
    cross_references: Mapped[list[str]] = mapped_column(JSONType, default=list)


class LegislationVersion(Base):
    """An earlier (or back-filled older) compilation of an instrument: the instrument's facts, provenance and
    sections as they were, kept whole so an as-at query and an earlier citation still find them."""

    __tablename__ = "legislation_versions"
    __table_args__ = (Index("ix_legislation_versions_doc_date", "doc_id", "version_date"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    doc_id: Mapped[str] = mapped_column(ForeignKey("legislation_docs.id", ondelete="CASCADE"))
    version_date: Mapped[date | None] = mapped_column(Date)
    snapshot: Mapped[dict[str, object]] = mapped_column(JSONType)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LegislationAmendment(Base):
    __tablename__ = "legislation_amendments"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    doc_id: Mapped[str] = mapped_column(ForeignKey("legislation_docs.id", ondelete="CASCADE"), index=True)
    amending_title: Mapped[str] = mapped_column(String(500))
    amending_id: Mapped[str | None] = mapped_column(String(120))
    commenced: Mapped[date | None] = mapped_column(Date)
    description: Mapped[str | None] = mapped_column(Text)
    sections: Mapped[list[str]] = mapped_column(JSONType, default=list)


class LegislationState(Base):
    """A single row whose generation token changes with every legislation write, so each process can
    tell when its in-memory citation index is stale (a random token, so a wiped and refilled store
    never looks current by accident)."""

    __tablename__ = "legislation_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    generation: Mapped[str] = mapped_column(String(36))


class LegislationBulkImport(Base):
    """A corpus import under way (domain/axiom/bulk.py): while any row exists, new sections' full-text
    indexing is deferred (SQLite: their ids wait in legislation_sections_fts_pending; PostgreSQL: the GIN
    index is dropped) and done once when the last import finishes. A row left by a process that died is
    found by its host and pid, or its heartbeat's age, and its unfinished indexing done then."""

    __tablename__ = "legislation_bulk_imports"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    path: Mapped[str] = mapped_column(String(1000))
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    heartbeat_at: Mapped[datetime] = mapped_column(UTCDateTime)
