"""The work economy: assignments agents claim, the submissions they make, and the defects recorded when
a submission (or what it reports) is wrong."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from domain.kernel.clock import utcnow
from domain.kernel.db import Base, JSONType, UTCDateTime
from domain.kernel.ids import new_id


class WorkAssignment(Base):
    """One unit of work. Lifecycle: open (anyone may claim) → claimed (leased to one agent until
    `expires_at`; a lease that runs out makes it open again) → submitted (a submission is being validated
    or waits for a curator) → resolved. An open assignment nobody claims before `expires_at` is removed
    and made again by the next sweep that still finds the work needed."""

    __tablename__ = "work_assignments"
    __table_args__ = (
        Index("ix_work_assignments_type_status", "work_type", "status", "created_at"),
        Index("ix_work_assignments_agent_status", "agent_id", "status"),
        Index("ix_work_assignments_item_key", "item_key", "status"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    work_type: Mapped[str] = mapped_column(String(40))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    # The quote-rate item key a price-observation assignment is for (None: any key).
    item_key: Mapped[str | None] = mapped_column(String(80))
    reward_credits: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(12), default="open")
    agent_id: Mapped[str | None] = mapped_column(String(36))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    submitted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)


class WorkSubmission(Base):
    """What an agent submitted for an assignment and what became of it. Status: validating (the
    validator job has not finished), accepted, deferred (a curator decides; credits held), rejected.
    One submission per assignment: the unique constraint makes a second one impossible even if two
    requests slip past the row lock."""

    __tablename__ = "work_submissions"
    __table_args__ = (
        UniqueConstraint("assignment_id", name="uq_work_submissions_assignment"),
        Index("ix_work_submissions_status_created", "status", "created_at"),
        Index("ix_work_submissions_agent", "agent_id", "created_at"),
        Index("ix_work_submissions_product", "retailer_slug", "product_key", "created_at"),
        Index("ix_work_submissions_created_id", "created_at", "id"),  # the curators' queue, status=all
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    assignment_id: Mapped[str] = mapped_column(ForeignKey("work_assignments.id", ondelete="CASCADE"))
    agent_id: Mapped[str] = mapped_column(String(36))
    agent_name: Mapped[str] = mapped_column(String(200))
    work_type: Mapped[str] = mapped_column(String(40))
    submission: Mapped[dict[str, Any]] = mapped_column(JSONType)
    item_key: Mapped[str | None] = mapped_column(String(80))
    retailer_slug: Mapped[str | None] = mapped_column(String(64))
    # What identifies the product at its retailer for de-duplication: the GTIN when given, else the URL.
    product_key: Mapped[str | None] = mapped_column(String(400))
    status: Mapped[str] = mapped_column(String(12), default="validating")
    reward_credits: Mapped[int] = mapped_column(Integer)
    credits_awarded: Mapped[int] = mapped_column(Integer, default=0)
    # The reference the credit transfer carries (ledger_entries.ref): the same value on every answer,
    # and unique in the ledger, so credits for this submission can only ever move once.
    ledger_ref: Mapped[str] = mapped_column(String(36), default=new_id)
    notes: Mapped[str] = mapped_column(Text, default="")
    # The validator's findings, one {check, result: pass|defer|reject, detail} per check.
    checks: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    price_observation_id: Mapped[str | None] = mapped_column(String(36))
    price_defect_id: Mapped[str | None] = mapped_column(String(36))
    defect_ids: Mapped[list[str]] = mapped_column(JSONType, default=list)
    decided_by: Mapped[str | None] = mapped_column(String(200))  # validator, or the curator's name
    decision_note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class DefectKind(StrEnum):
    """What a defect is about: a refused price observation, or one an applicability spot-check reported."""

    PRICE = "price"
    APPLICABILITY = "applicability"


class WorkDefect(Base):
    """A defect: a price observation the validator or a curator refused (kind price), or one reported by
    an applicability spot-check (kind applicability). Staff resolve it: accepted (the defect is real) or
    dismissed."""

    __tablename__ = "work_defects"
    __table_args__ = (
        Index("ix_work_defects_status_created", "status", "created_at"),
        Index("ix_work_defects_agent", "agent_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(20))  # DefectKind
    submission_id: Mapped[str] = mapped_column(ForeignKey("work_submissions.id", ondelete="CASCADE"))
    assignment_id: Mapped[str] = mapped_column(String(36))
    agent_id: Mapped[str] = mapped_column(String(36))
    agent_name: Mapped[str] = mapped_column(String(200))
    reason: Mapped[str] = mapped_column(String(40))  # a stable code: url_not_found, domain_mismatch, …
    detail: Mapped[str] = mapped_column(Text)
    scenario: Mapped[str | None] = mapped_column(String(200))
    cluster: Mapped[str | None] = mapped_column(String(200))
    data: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    status: Mapped[str] = mapped_column(String(12), default="open")  # open, accepted, dismissed
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    resolved_by: Mapped[str | None] = mapped_column(String(200))
    resolution_note: Mapped[str | None] = mapped_column(Text)
