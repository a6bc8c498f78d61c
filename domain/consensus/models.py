"""Proposals and their votes, the collaboration records on sections (intents, constraints, salience), section
locks and the questions raised to human reviewers: one table each, serving topics and documents through
resource_type."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    ColumnElement,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    case,
    false,
    literal_column,
)
from sqlalchemy.orm import InstrumentedAttribute, Mapped, mapped_column

from domain.kernel.clock import utcnow
from domain.kernel.db import Base, JSONType, UTCDateTime
from domain.kernel.ids import new_id
from domain.kernel.vocabulary import SpeltOut


class VoteKind(StrEnum):
    """An agent's vote on a proposal."""

    APPROVE = "approve"
    REJECT = "reject"
    OBJECT = "object"


VoteKindField = Annotated[VoteKind, SpeltOut(VoteKind)]


class Proposal(Base):
    __tablename__ = "proposals"
    __table_args__ = (
        Index("ix_proposals_resource_created", "resource_type", "resource_id", "created_at"),
        Index("ix_proposals_status_expires", "status", "expires_at"),
        # The reviewers' queue: document proposals of one status (or of any), oldest first.
        Index("ix_proposals_type_status_created", "resource_type", "status", "created_at", "id"),
        Index("ix_proposals_type_created_id", "resource_type", "created_at", "id"),
        # A topic's standing after every merge (domain/topics/lifecycle.py): its pending count, whether any
        # proposal merged, and its distinct authors by a skip scan, each in time independent of the
        # topic's history.
        Index("ix_proposals_resource_status", "resource_type", "resource_id", "status"),
        Index("ix_proposals_resource_author", "resource_type", "resource_id", "author_id", "status"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    resource_type: Mapped[str] = mapped_column(String(20))
    resource_id: Mapped[str] = mapped_column(String(36))
    section_id: Mapped[str] = mapped_column(String(256))
    author_id: Mapped[str] = mapped_column(String(36))
    author_name: Mapped[str] = mapped_column(String(200))
    new_content: Mapped[str] = mapped_column(Text)
    summary: Mapped[str] = mapped_column(Text)
    citations: Mapped[list[str]] = mapped_column(JSONType, default=list)
    proposal_type: Mapped[str | None] = mapped_column(String(40))
    base_version: Mapped[int] = mapped_column(Integer, default=1)
    ttl_seconds: Mapped[int] = mapped_column(Integer, default=300)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    approve_count: Mapped[int] = mapped_column(Integer, default=0)
    reject_count: Mapped[int] = mapped_column(Integer, default=0)
    object_count: Mapped[int] = mapped_column(Integer, default=0)
    stake: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class ProposalVote(Base):
    __tablename__ = "proposal_votes"
    # The unique key also serves every lookup by proposal: no index of proposal_id alone.
    __table_args__ = (UniqueConstraint("proposal_id", "agent_id", name="uq_proposal_votes_pair"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    proposal_id: Mapped[str] = mapped_column(ForeignKey("proposals.id"))
    agent_id: Mapped[str] = mapped_column(String(36), index=True)
    agent_name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(10))  # a VoteKind
    reason: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class EscalationPriority(StrEnum):
    """How urgent a question for the reviewers is, most urgent first: one vocabulary for both APIs and the
    desk. `normal` (the hub's former spelling) is read as MEDIUM (`parse`); `urgent` is the hub's only."""

    URGENT = "urgent"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    @classmethod
    def parse(cls, value: str) -> EscalationPriority:
        """A priority in either API's spelling (`normal` is MEDIUM); ValueError for anything else."""
        return cls.MEDIUM if value == "normal" else cls(value)


def stored_priority(stored: str) -> EscalationPriority:
    """A stored priority; anything outside the vocabulary reads (and ranks) as medium."""
    try:
        return EscalationPriority.parse(stored)
    except ValueError:
        return EscalationPriority.MEDIUM


def priority_rank(priority: ColumnElement[str] | InstrumentedAttribute[str]) -> ColumnElement[int]:
    """The rank of a stored priority, most urgent 0 (anything unknown ranks as medium): the reviewers' queue
    order, and the expression of its index, so its constants are written into the SQL rather than bound
    (PostgreSQL matches an expression index only against the same expression)."""
    levels = list(EscalationPriority)
    ranks: list[tuple[ColumnElement[str], ColumnElement[int]]] = [
        (literal_column(f"'{p.value}'"), literal_column(str(n))) for n, p in enumerate(levels)
    ]
    medium = levels.index(EscalationPriority.MEDIUM)
    return case(*ranks, value=priority, else_=literal_column(str(medium)))


class Escalation(Base):
    """A question for human reviewers: an escalation (`POST .../escalate`) or a question an agent asks and
    waits on until its `timeout_at` (`POST .../ask-human`, kind `question`)."""

    __tablename__ = "escalations"
    __table_args__ = (
        Index("ix_escalations_status_created", "status", "created_at"),
        Index("ix_escalations_created_id", "created_at", "id"),  # the reviewers' queue, status=all
        # The timeout sweep: open questions whose time is up (escalations have no timeout_at).
        Index("ix_escalations_status_timeout", "status", "timeout_at"),
        # A resource's questions or escalations, newest first (GET .../human-responses, .../escalations).
        Index(
            "ix_escalations_resource_kind_created", "resource_type", "resource_id", "kind", "created_at", "id"
        ),
        # The history of answers, newest first (the desk's and the review API's answered and decided lists).
        Index("ix_escalations_status_resolved", "status", "resolved_at", "id"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    resource_type: Mapped[str] = mapped_column(String(20))  # topic | document
    resource_id: Mapped[str] = mapped_column(String(36), index=True)
    section_id: Mapped[str | None] = mapped_column(String(256))
    proposal_id: Mapped[str | None] = mapped_column(String(36))
    message: Mapped[str] = mapped_column(Text)
    priority: Mapped[str] = mapped_column(String(16), default=EscalationPriority.MEDIUM)  # EscalationPriority
    raised_by: Mapped[str | None] = mapped_column(String(36))
    raised_by_name: Mapped[str | None] = mapped_column(String(200))
    # escalation | question (domain/consensus/escalations.py EscalationKind)
    kind: Mapped[str] = mapped_column(String(16), default="escalation", server_default="escalation")
    context: Mapped[str | None] = mapped_column(Text)  # a question's context for the human
    timeout_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # a question's deadline
    status: Mapped[str] = mapped_column(String(16), default="open")  # open | resolved | closed | timed-out
    # who raised it: an agent (agent), or an approval policy for a proposal (policy: human-only, a topic's
    # objection); withdrawing the proposal closes the policy's ones (domain/consensus/withdrawal.py)
    origin: Mapped[str] = mapped_column(String(16), default="agent")
    # delivery of the notification to reviewers: pending → delivered | failed
    delivery_status: Mapped[str] = mapped_column(String(16), default="pending")
    delivery_attempts: Mapped[int] = mapped_column(Integer, default=0)
    delivery_error: Mapped[str | None] = mapped_column(Text)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    resolution: Mapped[str | None] = mapped_column(Text)
    resolved_by: Mapped[str | None] = mapped_column(String(200))
    resolved_by_id: Mapped[str | None] = mapped_column(String(36))  # the staff member or person
    # a resolution that overrides the agents' consensus (PACT OnHumanResolved isOverride)
    is_override: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # what the answer decided on the proposal it names: approve | reject, or none
    decision: Mapped[str | None] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


# The reviewers' queue: by priority, then oldest first (domain/review/queue.py); the open ones, and all.
Index(
    "ix_escalations_status_priority_created",
    Escalation.status,
    priority_rank(Escalation.priority),
    Escalation.created_at,
    Escalation.id,
)
Index(
    "ix_escalations_priority_created",
    priority_rank(Escalation.priority),
    Escalation.created_at,
    Escalation.id,
)


class SectionIntent(Base):
    """What an agent means to do to a section (PACT §10.2): proposed until its TTL runs out (then accepted),
    objected once another agent objects, superseded by its author's next intent on the section."""

    __tablename__ = "section_intents"
    __table_args__ = (
        Index("ix_section_intents_resource_created", "resource_type", "resource_id", "created_at"),
        Index("ix_section_intents_status_expires", "status", "expires_at"),  # the acceptance sweep
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    resource_type: Mapped[str] = mapped_column(String(20))  # topic | document
    resource_id: Mapped[str] = mapped_column(String(36))
    section_id: Mapped[str] = mapped_column(String(256))
    agent_id: Mapped[str] = mapped_column(String(36))
    agent_name: Mapped[str] = mapped_column(String(200))
    goal: Mapped[str] = mapped_column(Text)
    category: Mapped[str] = mapped_column(String(64), default="general")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    status: Mapped[str] = mapped_column(String(16), default="proposed")  # domain/consensus/intents.py
    # end of the window for objections; NULL for intents declared before objections existed (accepted)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # accepted, objected or superseded


class IntentObjection(Base):
    """One agent's objection to another's intent: one per (intent, agent)."""

    __tablename__ = "intent_objections"
    # The unique key also serves every lookup by intent.
    __table_args__ = (UniqueConstraint("intent_id", "agent_id", name="uq_intent_objections_pair"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    intent_id: Mapped[str] = mapped_column(ForeignKey("section_intents.id"))
    agent_id: Mapped[str] = mapped_column(String(36))
    agent_name: Mapped[str] = mapped_column(String(200))
    reason: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class SectionConstraint(Base):
    """A boundary an agent sets on a section. `kind` classifies it: a topic's free category, a document's
    type (must, must_not, should, should_not, prefer)."""

    __tablename__ = "section_constraints"
    __table_args__ = (
        Index("ix_section_constraints_resource_created", "resource_type", "resource_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    resource_type: Mapped[str] = mapped_column(String(20))
    resource_id: Mapped[str] = mapped_column(String(36))
    section_id: Mapped[str] = mapped_column(String(256))
    agent_id: Mapped[str] = mapped_column(String(36))
    agent_name: Mapped[str] = mapped_column(String(200))
    boundary: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    status: Mapped[str] = mapped_column(String(16), default="active")  # active | withdrawn
    withdrawn_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    withdrawn_by: Mapped[str | None] = mapped_column(String(36))  # the agent's id
    withdrawn_by_name: Mapped[str | None] = mapped_column(String(200))


class SectionSalience(Base):
    """One agent's score of how much a section concerns it: one row per (resource, section, agent)."""

    __tablename__ = "section_salience"
    __table_args__ = (
        UniqueConstraint(
            "resource_type", "resource_id", "section_id", "agent_id", name="uq_section_salience_score"
        ),
        CheckConstraint("score >= 0 AND score <= 10", name="score_range"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    resource_type: Mapped[str] = mapped_column(String(20))
    resource_id: Mapped[str] = mapped_column(String(36))
    section_id: Mapped[str] = mapped_column(String(256))
    agent_id: Mapped[str] = mapped_column(String(36))
    agent_name: Mapped[str] = mapped_column(String(200))
    score: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)  # first scored
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)  # last scored


class SectionLock(Base):
    """An agent's exclusive claim on a section until `expires_at`: at most one row per (resource, section).
    A row past its expiry is no lock (readers compare with the clock); the TTL sweeps delete it."""

    __tablename__ = "section_locks"
    __table_args__ = (
        UniqueConstraint("resource_type", "resource_id", "section_id", name="uq_section_locks_section"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    resource_type: Mapped[str] = mapped_column(String(20))  # topic | document
    resource_id: Mapped[str] = mapped_column(String(36))
    section_id: Mapped[str] = mapped_column(String(256))
    agent_id: Mapped[str] = mapped_column(String(36), index=True)
    agent_name: Mapped[str] = mapped_column(String(128))
    ttl_seconds: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
