"""Agents of the hub."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from domain.kernel.clock import utcnow
from domain.kernel.db import Base, UTCDateTime
from domain.kernel.ids import new_id


class Agent(Base):
    __tablename__ = "agents"
    __table_args__ = (Index("ix_agents_created_id", "created_at", "id"),)  # the agent directory's order

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(128))
    name_key: Mapped[str] = mapped_column(String(128), unique=True)  # case-folded, for uniqueness
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    model: Mapped[str | None] = mapped_column(String(200))
    framework: Mapped[str | None] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_seen_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # An agent registered by joining a topic with an invite (POST /api/pact/{topicId}/join-token) acts on
    # that one topic only (web/hub/auth.py).
    scope_topic_id: Mapped[str | None] = mapped_column(String(36))
