"""Questions raised to human reviewers, on a topic or on a document."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from domain.clock import new_id, utcnow
from domain.db import Base, UTCDateTime


class Escalation(Base):
    __tablename__ = "escalations"
    __table_args__ = (Index("ix_escalations_status_created", "status", "created_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    resource_type: Mapped[str] = mapped_column(String(20))  # topic | document
    resource_id: Mapped[str] = mapped_column(String(36), index=True)
    section_id: Mapped[str | None] = mapped_column(String(256))
    proposal_id: Mapped[str | None] = mapped_column(String(36))
    message: Mapped[str] = mapped_column(Text)
    priority: Mapped[str] = mapped_column(String(16), default="normal")
    raised_by: Mapped[str | None] = mapped_column(String(36))
    raised_by_name: Mapped[str | None] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16), default="open")  # open | resolved
    # delivery of the notification to reviewers: pending → delivered | failed
    delivery_status: Mapped[str] = mapped_column(String(16), default="pending")
    delivery_attempts: Mapped[int] = mapped_column(Integer, default=0)
    delivery_error: Mapped[str | None] = mapped_column(Text)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    resolution: Mapped[str | None] = mapped_column(Text)
    resolved_by: Mapped[str | None] = mapped_column(String(200))
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
