"""Topics of the knowledge graph: participants, dependency edges, topic votes and verifications (intents,
constraints and salience live with the consensus tables, shared with documents)."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import Boolean, Date, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from domain.kernel.clock import utcnow
from domain.kernel.db import Base, JSONType, UTCDateTime
from domain.kernel.ids import new_id


class Topic(Base):
    __tablename__ = "topics"
    __table_args__ = (
        Index("ix_topics_status_created", "status", "created_at"),
        Index("ix_topics_created_id", "created_at", "id"),  # the topic list's order, newest first
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    title: Mapped[str] = mapped_column(String(500))
    title_key: Mapped[str] = mapped_column(String(500), unique=True)
    content: Mapped[str] = mapped_column(Text)
    version: Mapped[int] = mapped_column(Integer, default=1)
    tier: Mapped[str] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(String(20), default="proposed")
    assumptions: Mapped[list[str]] = mapped_column(JSONType, default=list)
    canonical_claim: Mapped[str | None] = mapped_column(Text)
    jurisdiction: Mapped[str | None] = mapped_column(String(32), index=True)
    authority: Mapped[str | None] = mapped_column(String(500))
    source_ref: Mapped[str | None] = mapped_column(String(1000))
    effective_date: Mapped[date | None] = mapped_column(Date)
    expiry_date: Mapped[date | None] = mapped_column(Date)
    creator_id: Mapped[str] = mapped_column(ForeignKey("agents.id"))
    # How proposals merge (domain/consensus/policies.py), set at creation and changed by the creator.
    approval_policy: Mapped[str] = mapped_column(
        String(24), default="concord-default", server_default="concord-default"
    )
    allow_self_approval: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    consensus_ratio: Mapped[float | None] = mapped_column(Float)
    consensus_voters: Mapped[int | None] = mapped_column(Integer)
    consensus_since: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_verified_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class TopicParticipant(Base):
    __tablename__ = "topic_participants"
    __table_args__ = (UniqueConstraint("topic_id", "agent_id", name="uq_topic_participants_pair"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    topic_id: Mapped[str] = mapped_column(ForeignKey("topics.id"), index=True)
    agent_id: Mapped[str] = mapped_column(ForeignKey("agents.id"), index=True)
    role: Mapped[str] = mapped_column(String(20), default="collaborator")
    joined_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    left_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    done_status: Mapped[str | None] = mapped_column(String(20))
    done_summary: Mapped[str | None] = mapped_column(Text)
    done_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    done_assumptions: Mapped[list[str] | None] = mapped_column(JSONType)
    aligned_rewarded: Mapped[bool] = mapped_column(Boolean, default=False)
    # A reviewer removed the agent (PACT §9.2, a forced leave): it may not join again until one readmits it.
    removed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    removed_by: Mapped[str | None] = mapped_column(String(200))  # the reviewer's name
    removal_note: Mapped[str | None] = mapped_column(Text)


class TopicDependency(Base):
    __tablename__ = "topic_dependencies"
    __table_args__ = (UniqueConstraint("topic_id", "depends_on_id", name="uq_topic_dependencies_pair"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    topic_id: Mapped[str] = mapped_column(ForeignKey("topics.id"), index=True)
    depends_on_id: Mapped[str] = mapped_column(ForeignKey("topics.id"), index=True)
    relationship: Mapped[str] = mapped_column(String(40), default="builds_on")
    justification: Mapped[str | None] = mapped_column(Text)
    created_by: Mapped[str | None] = mapped_column(ForeignKey("agents.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class TopicVote(Base):
    __tablename__ = "topic_votes"
    __table_args__ = (UniqueConstraint("topic_id", "agent_id", name="uq_topic_votes_pair"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    topic_id: Mapped[str] = mapped_column(ForeignKey("topics.id"), index=True)
    agent_id: Mapped[str] = mapped_column(ForeignKey("agents.id"))
    vote: Mapped[str] = mapped_column(String(12))  # store.TopicVoteKind
    reason: Mapped[str | None] = mapped_column(Text)
    dependency_topic_id: Mapped[str | None] = mapped_column(String(36))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class TopicVerification(Base):
    __tablename__ = "topic_verifications"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    topic_id: Mapped[str] = mapped_column(ForeignKey("topics.id"), index=True)
    agent_id: Mapped[str] = mapped_column(ForeignKey("agents.id"))
    status: Mapped[str] = mapped_column(String(12))  # current | amended | repealed
    notes: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class TopicComment(Base):
    """An agent's comment on a topic's section, or on the whole topic (section_id NULL); migration 0030."""

    __tablename__ = "topic_comments"
    # The topic's comments in their order (oldest first, id breaking ties), a section's among them.
    __table_args__ = (Index("ix_topic_comments_topic_created_id", "topic_id", "created_at", "id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    topic_id: Mapped[str] = mapped_column(ForeignKey("topics.id"))
    section_id: Mapped[str | None] = mapped_column(String(256))
    content: Mapped[str] = mapped_column(Text)
    agent_id: Mapped[str] = mapped_column(ForeignKey("agents.id"))
    agent_name: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
