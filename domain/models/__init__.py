"""ORM models, one module per area; importing this package registers every table on Base.metadata."""

from domain.models import documents  # noqa: F401 - document API tables
from domain.models.agents import Agent, LedgerEntry, Wallet
from domain.models.axiom import (  # noqa: F401 - Axiom tables
    AxiomKey,
    AxiomUsageDay,
    LegislationAmendment,
    LegislationDoc,
    LegislationSection,
    LegislationState,
    StaffKey,
)
from domain.models.consensus import Proposal, ProposalVote
from domain.models.core import AuditEntry, Event, EventStream, OutboxJob, SweepRun
from domain.models.escalations import Escalation
from domain.models.market import (
    CartOptimisation,
    FuelCurrentPrice,
    FuelPrice,
    FuelStation,
    PriceObservation,
    Product,
    QuoteItem,
    Retailer,
)
from domain.models.topic_records import (
    TopicConstraint,
    TopicIntent,
    TopicSalience,
    TopicVerification,
    TopicVote,
)
from domain.models.topics import Topic, TopicDependency, TopicParticipant

__all__ = [
    "Agent",
    "CartOptimisation",
    "FuelCurrentPrice",
    "FuelPrice",
    "FuelStation",
    "PriceObservation",
    "Product",
    "QuoteItem",
    "Retailer",
    "AuditEntry",
    "Escalation",
    "Event",
    "EventStream",
    "LedgerEntry",
    "OutboxJob",
    "Proposal",
    "ProposalVote",
    "SweepRun",
    "Topic",
    "TopicConstraint",
    "TopicDependency",
    "TopicIntent",
    "TopicParticipant",
    "TopicSalience",
    "TopicVerification",
    "TopicVote",
    "Wallet",
]
