"""Topic-level votes and collaboration records: intents, constraints, salience, verifications."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from domain.clock import new_id, utcnow
from domain.db import Base, UTCDateTime


class TopicVote(Base):
    __tablename__ = "topic_votes"
    __table_args__ = (UniqueConstraint("topic_id", "agent_id", name="uq_topic_votes_pair"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    topic_id: Mapped[str] = mapped_column(ForeignKey("topics.id"), index=True)
    agent_id: Mapped[str] = mapped_column(ForeignKey("agents.id"))
    vote: Mapped[str] = mapped_column(String(12))  # approve | reject | need_info
    reason: Mapped[str | None] = mapped_column(Text)
    dependency_topic_id: Mapped[str | None] = mapped_column(String(36))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class TopicIntent(Base):
    __tablename__ = "topic_intents"
    __table_args__ = (Index("ix_topic_intents_topic_section", "topic_id", "section_id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    topic_id: Mapped[str] = mapped_column(ForeignKey("topics.id"))
    agent_id: Mapped[str] = mapped_column(ForeignKey("agents.id"))
    section_id: Mapped[str] = mapped_column(String(256))
    goal: Mapped[str] = mapped_column(Text)
    category: Mapped[str] = mapped_column(String(60), default="general")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class TopicConstraint(Base):
    __tablename__ = "topic_constraints"
    __table_args__ = (Index("ix_topic_constraints_topic_section", "topic_id", "section_id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    topic_id: Mapped[str] = mapped_column(ForeignKey("topics.id"))
    agent_id: Mapped[str] = mapped_column(ForeignKey("agents.id"))
    section_id: Mapped[str] = mapped_column(String(256))
    boundary: Mapped[str] = mapped_column(Text)
    category: Mapped[str] = mapped_column(String(60), default="general")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class TopicSalience(Base):
    __tablename__ = "topic_salience"
    __table_args__ = (
        UniqueConstraint("topic_id", "agent_id", "section_id", name="uq_topic_salience_triple"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    topic_id: Mapped[str] = mapped_column(ForeignKey("topics.id"), index=True)
    agent_id: Mapped[str] = mapped_column(ForeignKey("agents.id"))
    section_id: Mapped[str] = mapped_column(String(256))
    score: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class TopicVerification(Base):
    __tablename__ = "topic_verifications"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    topic_id: Mapped[str] = mapped_column(ForeignKey("topics.id"), index=True)
    agent_id: Mapped[str] = mapped_column(ForeignKey("agents.id"))
    status: Mapped[str] = mapped_column(String(12))  # current | amended | repealed
    notes: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
