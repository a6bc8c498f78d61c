"""Requests and responses of the work economy and of the curators' review of deferred work."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import Field

from domain.kernel.vocabulary import SpeltOut
from domain.work.claims import AssignmentStatusField, WorkType
from domain.work.review import DefectStatus, DefectStatusField, SubmissionStatusField
from domain.work.validator import VerdictField
from web.hub.schemas import Model
from web.kernel.events import Event
from web.kernel.wire import MAX_INT, Exact, Text, Timestamp


class ClaimBody(Model):
    workType: WorkType = Field(
        description="price_observation_mining or applicability_spotcheck (the public hub's scrape, "
        "qa_spot_check and dependency_proposal are not handed out here)"
    )
    payload: dict[str, Any] | None = Field(
        default=None,
        description="price_observation_mining: {itemKey?} to claim work for one item key; "
        "applicability_spotcheck: free-form context of the check",
    )
    expiresInMinutes: int = Field(
        default=60, ge=1, le=1440, description="Lease length in minutes (default 60, at most 1440)."
    )


class Assignment(Exact):
    id: str
    workType: str
    payload: dict[str, Any]
    rewardCredits: int
    status: AssignmentStatusField
    agentId: str | None
    claimedAt: Timestamp | None
    submittedAt: Timestamp | None
    resolvedAt: Timestamp | None
    expiresAt: Timestamp = Field(description="Lease end when claimed; when unclaimed, when the offer lapses")
    createdAt: Timestamp


class Claimed(Exact):
    assignment: Assignment
    reused: bool = Field(description="True when the caller's own live claim of that type was returned")


class AssignmentsQuery(Model):
    status: AssignmentStatusField | None = Field(
        default=None, description="open: work anyone may claim; other statuses: your own assignments"
    )


class Assignments(Exact):
    assignments: list[Assignment]
    count: int
    status: str | None


class SubmitBody(Model):
    assignmentId: UUID
    submission: dict[str, Any] = Field(
        description="A price observation submission for price_observation_mining (spec table), otherwise a "
        "free-form object; for applicability_spotcheck, defects: [{description, scenario?, cluster?}]"
    )


class Finding(Exact):
    check: str
    result: VerdictField
    detail: str
    code: str


class WorkResult(Exact):
    """The spec's work submit response, plus the submission's id, state and the validator's findings."""

    submissionId: str
    assignmentId: str
    workType: str
    status: SubmissionStatusField
    accepted: bool
    deferred: bool = Field(description="The validator passed it but a curator decides; credits are held")
    creditsAwarded: int = Field(ge=0)
    creditsHeld: int = Field(ge=0, description="Credits waiting on the validator or a curator")
    ledgerId: str = Field(description="Reference carried by the ledger entry that pays this submission")
    notes: str
    checks: list[Finding]
    decidedBy: str | None
    defectIds: list[str] | None = None
    priceObservationId: str | None = None
    priceDefectId: str | None = None
    url: str = Field(description="Where to read this submission again")


class WorkFeed(Exact):
    events: list[Event]
    nextCursor: str = Field(description="Send as `after` for the next page")
    hasMore: bool


class DefectsQuery(Model):
    status: Annotated[DefectStatus | Literal["all"], SpeltOut(DefectStatus, ("all",))] = DefectStatus.OPEN
    scenario: str | None = Field(default=None, max_length=200, description="Item key of price defects")
    cluster: str | None = Field(default=None, max_length=200, description="Retailer slug of price defects")
    submittedBy: str | None = Field(default=None, max_length=36, description="Agent id")
    limit: int = Field(default=100, ge=1, le=500)


class Defect(Exact):
    id: str
    kind: Literal["price", "applicability"]
    status: DefectStatusField
    reason: str
    detail: str
    scenario: str | None
    cluster: str | None
    submissionId: str
    assignmentId: str
    submittedBy: str
    agentName: str
    data: dict[str, Any]
    createdAt: Timestamp
    resolvedAt: Timestamp | None
    resolvedBy: str | None
    resolutionNote: str | None


class DefectFilter(Exact):
    status: str
    scenario: str | None
    cluster: str | None
    submittedBy: str | None
    limit: int


class Defects(Exact):
    defects: list[Defect]
    count: int
    filter: DefectFilter


class ResolveDefectBody(Model):
    status: Literal[DefectStatus.ACCEPTED, DefectStatus.DISMISSED] = Field(
        description="accepted: the defect is real; dismissed: it is not"
    )
    note: str | None = Field(default=None, max_length=2000)


class ReviewQuery(Model):
    status: Literal["deferred", "validating", "accepted", "rejected", "all"] = "deferred"
    limit: int = Field(default=50, ge=1, le=200)
    offset: int = Field(default=0, ge=0, le=MAX_INT)


class ReviewRetailer(Exact):
    slug: str
    name: str
    domain: str


class ReviewItem(WorkResult):
    agentId: str
    agentName: str
    submission: dict[str, Any]
    itemKey: str | None
    retailer: ReviewRetailer | None
    createdAt: Timestamp
    decidedAt: Timestamp | None
    decisionNote: str | None


class ReviewQueue(Exact):
    submissions: list[ReviewItem]
    total: int
    limit: int
    offset: int
    status: str


class DecisionAcceptBody(Model):
    note: str = Field(default="", max_length=2000, description="Why (optional when accepting)")


class DecisionRejectBody(Model):
    note: Text = Field(min_length=1, max_length=2000, description="Why the observation is refused")
