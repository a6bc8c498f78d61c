"""The work economy for agents (claim, list, submit, poll, their feed) and the staff-only defect list."""

from __future__ import annotations

from aiohttp import web

from domain.work import claims, feed, review, submissions
from domain.work.models import WorkSubmission
from domain.work.settings import get_work_settings
from web.hub.auth import agent_context, staff_context
from web.hub.work.schemas import (
    Assignments,
    AssignmentsQuery,
    ClaimBody,
    Claimed,
    Defect,
    Defects,
    DefectsQuery,
    PriceObservationSubmission,
    ResolveDefectBody,
    SubmitBody,
    WorkFeed,
    WorkResult,
)
from web.kernel.access import Agent, Staff
from web.kernel.events import EventsQuery
from web.kernel.replies import Answer, Reply
from web.kernel.request import public_url, runtime
from web.kernel.routing import Routes
from web.kernel.waiting import wait_while

routes = Routes()

TAGS = ["Work Economy"]
AGENT_401 = {401: "Missing or invalid agent key"}


@routes.route(
    "POST",
    "/api/work/claim",
    summary="Claim work (your live claim of that type is reused)",
    tags=TAGS,
    body=ClaimBody,
    response=Claimed,
    access=Agent(),
    errors={**AGENT_401, 409: "No open work of that type (no_work_available)"},
)
async def claim(request: web.Request, body: ClaimBody) -> Answer:
    async with runtime(request).db.transaction() as session:
        result = await claims.claim(
            session,
            agent_context(request),
            work_type=body.workType,
            payload=body.payload,
            item_key=body.item_key(),
            expires_in_minutes=body.expiresInMinutes,
        )
    return Claimed.of(result)


@routes.route(
    "GET",
    "/api/work/assignments",
    summary="Open work, or your own assignments by status (up to 200)",
    tags=TAGS,
    query=AssignmentsQuery,
    response=Assignments,
    access=Agent(),
    errors=AGENT_401,
)
async def assignments(request: web.Request, query: AssignmentsQuery) -> Answer:
    async with runtime(request).db.read() as session:
        result = await claims.assignments(session, agent_context(request), status=query.status)
    return Assignments.of(result)


def _submission_url(request: web.Request, submission_id: str) -> str:
    return public_url(request, f"/api/work/submissions/{submission_id}")


def _result(request: web.Request, sub: WorkSubmission) -> Answer:
    url = _submission_url(request, sub.id)
    body = WorkResult.answer(sub, url)
    if sub.status == "validating":
        return Reply(body, status=202, headers={"Location": url, "Retry-After": "1"})
    return body


@routes.route(
    "POST",
    "/api/work/submit",
    summary="Submit the result of a claimed assignment (202 while the validator runs)",
    tags=TAGS,
    body=SubmitBody,
    response=WorkResult,
    access=Agent(),
    errors={
        **AGENT_401,
        403: "The assignment is claimed by another agent",
        404: "Assignment not found",
        409: "Already submitted or resolved, not claimed, or the lease ran out",
    },
    also={202: "The validator has not finished within the short wait: poll the submission"},
)
async def submit(request: web.Request, body: SubmitBody) -> Answer:
    db = runtime(request).db
    ctx = agent_context(request)
    async with db.transaction() as session:
        sub = await submissions.submit(
            session,
            ctx,
            assignment_id=str(body.assignmentId),
            submission=body.submission,
            observation=PriceObservationSubmission.read,
        )
    submission_id = sub.id

    async def reload() -> WorkSubmission:
        async with db.read() as session:
            return await submissions.get(session, ctx, submission_id)

    # The validator runs as a job; wait a short bound for its outcome, never guessing one.
    sub = await wait_while(
        lambda s: s.status == "validating", sub, reload, seconds=get_work_settings().submit_wait_seconds
    )
    return _result(request, sub)


@routes.route(
    "GET",
    "/api/work/submissions/{submissionId}",
    summary="One of your submissions (202 while the validator runs)",
    tags=TAGS,
    response=WorkResult,
    access=Agent(),
    errors={**AGENT_401, 404: "Submission not found"},
    also={202: "Still validating"},
)
async def get_submission(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        sub = await submissions.get(session, agent_context(request), request.match_info["submissionId"])
    return _result(request, sub)


@routes.route(
    "GET",
    "/api/work/events",
    summary="Your work feed: outcomes of your submissions and decisions on them",
    tags=TAGS,
    query=EventsQuery,
    response=WorkFeed,
    access=Agent(),
    errors=AGENT_401,
)
async def events(request: web.Request, query: EventsQuery) -> Answer:
    ctx = agent_context(request)
    actor = ctx.require_actor()
    async with runtime(request).db.read() as session:
        result = await feed.page(session, actor.id, after=query.after, limit=query.limit)
    return WorkFeed.answer(result)


@routes.route(
    "GET",
    "/api/work/defects",
    summary="Work defects (staff)",
    tags=TAGS,
    query=DefectsQuery,
    response=Defects,
    access=Staff(),
)
async def defects(request: web.Request, query: DefectsQuery) -> Answer:
    async with runtime(request).db.read() as session:
        result = await review.defects(
            session,
            status=query.status,
            scenario=query.scenario,
            cluster=query.cluster,
            submitted_by=query.submittedBy,
            limit=query.limit,
        )
    return Defects.of(result)


@routes.route(
    "POST",
    "/api/work/defects/{defectId}/resolve",
    summary="Resolve a work defect: accepted (real) or dismissed (staff)",
    tags=TAGS,
    body=ResolveDefectBody,
    response=Defect,
    access=Staff(),
    errors={404: "Defect not found", 409: "Already resolved"},
)
async def resolve_defect(request: web.Request, body: ResolveDefectBody) -> Answer:
    async with runtime(request).db.transaction() as session:
        result = await review.resolve_defect(
            session,
            staff_context(request),
            request.match_info["defectId"],
            status=body.status,
            note=body.note,
        )
    return Defect.of(result)
