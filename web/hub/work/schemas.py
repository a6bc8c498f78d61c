"""Requests and responses of the work economy and of the curators' review of deferred work."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit
from uuid import UUID

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
)
from stdnum import ean as gtin

from domain.kernel import events as kernel_events
from domain.kernel.clock import iso
from domain.kernel.errors import BadRequest
from domain.kernel.vocabulary import SpeltOut
from domain.review.limits import NOTE_MAX
from domain.work import claims, observations, review, submissions
from domain.work.claims import AssignmentStatus, AssignmentStatusField, WorkType
from domain.work.models import DefectKind, WorkDefect, WorkSubmission
from domain.work.observations import PriceUnit
from domain.work.review import DefectStatus, DefectStatusField, SubmissionStatusField
from domain.work.validator import VerdictField
from web.hub.schemas import Model
from web.kernel.events import Event, EventPage
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

    def item_key(self) -> object:
        """The item key a price-observation claim asks for (`payload.itemKey`, as sent; None when absent)."""
        return (self.payload or {}).get("itemKey")


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

    @classmethod
    def of(cls, listed: claims.Listed) -> Assignment:
        """The assignment; one whose lease lapsed reads as open work, nobody's."""
        a = listed.assignment
        return cls(
            id=a.id,
            workType=a.work_type,
            payload=a.payload,
            rewardCredits=a.reward_credits,
            status=AssignmentStatus.OPEN if listed.lapsed else AssignmentStatus(a.status),
            agentId=None if listed.lapsed else a.agent_id,
            claimedAt=iso(a.claimed_at),
            submittedAt=iso(a.submitted_at),
            resolvedAt=iso(a.resolved_at),
            expiresAt=iso(a.expires_at),
            createdAt=iso(a.created_at),
        )


class Claimed(Exact):
    assignment: Assignment
    reused: bool = Field(description="True when the caller's own live claim of that type was returned")

    @classmethod
    def of(cls, c: claims.Claim) -> Claimed:
        return cls(assignment=Assignment.of(claims.Listed(c.assignment)), reused=c.reused)


class AssignmentsQuery(Model):
    status: AssignmentStatusField | None = Field(
        default=None, description="open: work anyone may claim; other statuses: your own assignments"
    )


class Assignments(Exact):
    assignments: list[Assignment]
    count: int
    status: str | None

    @classmethod
    def of(cls, found: claims.AssignmentList) -> Assignments:
        listed = [Assignment.of(a) for a in found.items]
        return cls(assignments=listed, count=len(listed), status=found.status)


class SubmitBody(Model):
    assignmentId: UUID
    submission: dict[str, Any] = Field(
        description="A price observation submission for price_observation_mining (spec table), otherwise a "
        "free-form object; for applicability_spotcheck, defects: [{description, scenario?, cluster?}]"
    )


Key = Annotated[StrictStr, Field(min_length=1, max_length=80)]
Slug = Annotated[StrictStr, Field(min_length=1, max_length=64)]
Name = Annotated[StrictStr, Field(min_length=5, max_length=250)]
Url = Annotated[StrictStr, Field(min_length=1, max_length=2000)]


class PriceObservationSubmission(BaseModel):
    """A price observation submission (spec: "Price observation submission"), a price_observation_mining
    submission's `submission`, and every rule of its table that needs no reference data (those that do are
    domain/work/observations.check's). It is read by the submit operation from SubmitBody's free-form
    `submission` once the assignment is known to be a price observation's (`read`), so it is not part of the
    OpenAPI documents."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    itemKey: Key
    retailerSlug: Slug
    productName: Name
    productUrl: Url
    ean: StrictStr | None = None
    priceCents: StrictInt = Field(ge=1, le=observations.MAX_CENTS)
    unitPriceCents: StrictInt = Field(ge=1, le=observations.MAX_CENTS)
    unitPriceUnit: Annotated[PriceUnit, SpeltOut(PriceUnit)]
    inStock: StrictBool = True

    @field_validator("productUrl")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http(s) URL of the public product page")
        if parts.username or parts.password:
            raise ValueError("must not carry a user name or password")
        try:
            parts.port  # noqa: B018 - raises on a malformed port
        except ValueError:
            raise ValueError("has a malformed port") from None
        return value

    @field_validator("ean")
    @classmethod
    def _gtin(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        digits = value.replace(" ", "").replace("-", "")
        if not digits.isdigit() or len(digits) not in (8, 12, 13, 14):
            raise ValueError("must be a GTIN of 8, 12, 13 or 14 digits")
        if not gtin.is_valid(digits):
            raise ValueError("check digit does not match: not a valid GTIN")
        return digits.zfill(14)  # one form for every length, so de-duplication compares like with like

    def observation(self) -> observations.Observation:
        return observations.Observation(
            item_key=self.itemKey,
            retailer_slug=self.retailerSlug,
            product_name=self.productName,
            product_url=self.productUrl,
            ean=self.ean,
            price_cents=self.priceCents,
            unit_price_cents=self.unitPriceCents,
            unit_price_unit=self.unitPriceUnit,
            in_stock=self.inStock,
        )

    @classmethod
    def read(cls, submission: dict[str, Any]) -> observations.Observation:
        """The observation `submission` holds; a 400 naming every field it refuses."""
        try:
            return cls.model_validate(submission).observation()
        except ValidationError as exc:
            errors = exc.errors()
            where = [f"submission.{'.'.join(str(p) for p in e['loc'])}" for e in errors]
            detail = "; ".join(f"{loc}: {e['msg']}" for loc, e in zip(where, errors, strict=True))
            raise BadRequest(detail, code="validation_error", field=where[0], fields=where) from None


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

    @staticmethod
    def fields_of(sub: WorkSubmission) -> dict[str, Any]:
        """The submission by wire name, without its url. A field of one kind of work only (a spot-check's
        defectIds, the price observation's or its defect's id once there is one) is left out, not null."""
        body: dict[str, Any] = {
            "submissionId": sub.id,
            "assignmentId": sub.assignment_id,
            "workType": sub.work_type,
            "status": sub.status,
            "accepted": sub.status == "accepted",
            "deferred": sub.status == "deferred",
            "creditsAwarded": sub.credits_awarded,
            "creditsHeld": submissions.credits_held(sub),
            "ledgerId": sub.ledger_ref,
            "notes": sub.notes or _pending_note(sub),
            "checks": sub.checks,
            "decidedBy": sub.decided_by,
        }
        if sub.work_type == WorkType.APPLICABILITY_SPOTCHECK:
            body["defectIds"] = list(sub.defect_ids)
        if sub.price_observation_id:
            body["priceObservationId"] = sub.price_observation_id
        if sub.price_defect_id:
            body["priceDefectId"] = sub.price_defect_id
        return body

    @classmethod
    def answer(cls, sub: WorkSubmission, url: str) -> dict[str, Any]:
        """The spec's work submit response, plus what a client needs to follow up, as this model's wire dict
        (checked strictly by the operation's Shape as it is written)."""
        return {**cls.fields_of(sub), "url": url}


def _pending_note(sub: WorkSubmission) -> str:
    if sub.status == "validating":
        return f"validating: the outcome is not known yet; poll GET /api/work/submissions/{sub.id}"
    return ""


class WorkFeed(Exact):
    events: list[Event]
    nextCursor: str = Field(description="Send as `after` for the next page")
    hasMore: bool

    @staticmethod
    def answer(page: kernel_events.Page) -> dict[str, Any]:
        return EventPage.fields(page)


class DefectsQuery(Model):
    status: Annotated[DefectStatus | Literal["all"], SpeltOut(DefectStatus, ("all",))] = DefectStatus.OPEN
    scenario: str | None = Field(default=None, max_length=200, description="Item key of price defects")
    cluster: str | None = Field(default=None, max_length=200, description="Retailer slug of price defects")
    submittedBy: str | None = Field(default=None, max_length=36, description="Agent id")
    limit: int = Field(default=100, ge=1, le=500)


class Defect(Exact):
    id: str
    kind: Literal[DefectKind.PRICE, DefectKind.APPLICABILITY]
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

    @classmethod
    def of(cls, d: WorkDefect) -> Defect:
        return cls(
            id=d.id,
            kind=DefectKind(d.kind),
            status=DefectStatus(d.status),
            reason=d.reason,
            detail=d.detail,
            scenario=d.scenario,
            cluster=d.cluster,
            submissionId=d.submission_id,
            assignmentId=d.assignment_id,
            submittedBy=d.agent_id,
            agentName=d.agent_name,
            data=d.data,
            createdAt=iso(d.created_at),
            resolvedAt=iso(d.resolved_at),
            resolvedBy=d.resolved_by,
            resolutionNote=d.resolution_note,
        )


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

    @classmethod
    def of(cls, found: review.DefectList) -> Defects:
        return cls(
            defects=[Defect.of(d) for d in found.defects],
            count=len(found.defects),
            filter=DefectFilter(
                status=found.status,
                scenario=found.scenario,
                cluster=found.cluster,
                submittedBy=found.submitted_by,
                limit=found.limit,
            ),
        )


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

    @staticmethod
    def review_fields(r: review.Reviewed) -> dict[str, Any]:
        """The submission as a curator reads it, by wire name, without its url (the review desk's pages
        read these too)."""
        sub, retailer = r.submission, r.retailer
        return {
            **WorkResult.fields_of(sub),
            "agentId": sub.agent_id,
            "agentName": sub.agent_name,
            "submission": sub.submission,
            "itemKey": sub.item_key,
            "retailer": None
            if retailer is None
            else {"slug": retailer.slug, "name": retailer.name, "domain": retailer.domain},
            "createdAt": iso(sub.created_at),
            "decidedAt": iso(sub.decided_at),
            "decisionNote": sub.decision_note,
        }

    @classmethod
    def answer_with(cls, r: review.Reviewed, url: Callable[[str], str]) -> dict[str, Any]:
        """This model's wire dict; `url` gives a submission's address from its id."""
        return {**cls.review_fields(r), "url": url(r.submission.id)}


class ReviewQueue(Exact):
    submissions: list[ReviewItem]
    total: int
    limit: int
    offset: int
    status: str

    @staticmethod
    def answer(page: review.ReviewPage, url: Callable[[str], str]) -> dict[str, Any]:
        return {
            "submissions": [ReviewItem.answer_with(r, url) for r in page.items],
            "total": page.total,
            "limit": page.limit,
            "offset": page.offset,
            "status": page.status,
        }


class DecisionAcceptBody(Model):
    note: str = Field(default="", max_length=NOTE_MAX, description="Why (optional when accepting)")


class DecisionRejectBody(Model):
    note: Text = Field(min_length=1, max_length=NOTE_MAX, description="Why the observation is refused")
