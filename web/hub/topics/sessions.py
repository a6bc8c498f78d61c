"""PACT v2.0.3 session awareness on a topic (§4.4): `/api/pact/{topicId}/_status`, `manifest`,
`_heartbeat`, `mark-read` and `_onboard`, with agent keys; the caller must have joined the topic."""

from __future__ import annotations

from aiohttp import web
from pydantic import Field

from domain.consensus.sessions import ConstraintDraft, PactRole
from domain.kernel.errors import Unprocessable
from domain.topics import sessions
from web.hub.auth import agent_context
from web.hub.topics.read_models import JoinResult
from web.hub.topics.schemas import REMOVED_ERROR, SectionId
from web.kernel.access import Agent
from web.kernel.replies import Answer, Reply
from web.kernel.request import runtime
from web.kernel.routing import Routes
from web.kernel.sessions_wire import (
    ONBOARD_ERRORS,
    SESSION_ERRORS,
    ContactIn,
    HeartbeatBody,
    HeartbeatOut,
    ManifestOut,
    MarkReadBody,
    MarkReadOut,
    OnboardedOut,
    OnboardRejected,
    Request,
    StatusOut,
    StatusQuery,
    is_refusal,
    sparse,
)
from web.kernel.wire import Text

routes = Routes()
TAG = ["Sessions"]
ERRORS = {401: "Missing or invalid agent key", 404: "Topic not found", **SESSION_ERRORS}


def _topic(request: web.Request) -> str:
    return request.match_info["topicId"]


class OnboardConstraint(Request):
    sectionId: SectionId
    boundary: Text = Field(min_length=1, max_length=2000)
    category: str | None = Field(default=None, max_length=60)


class OnboardBody(Request):
    """The constraints to publish with the join, all or none. A hub agent joins under its registered name
    (PACT's agentName is accepted and not used) as a participant; the PACT role it declares (observer,
    contributor or proposer) and its contact are what its manifest and the others' show."""

    agentName: str | None = Field(default=None, max_length=128)
    role: PactRole | None = Field(
        default=None, description="PACT's role descriptor, shown in the manifests (default contributor)."
    )
    constraints: list[OnboardConstraint] = Field(default_factory=list, max_length=50)
    contact: ContactIn | None = None


class TopicOnboarded(OnboardedOut):
    registration: JoinResult


@routes.route(
    "GET",
    "/api/pact/{topicId}/_status",
    summary="The topic's session snapshot: phase, members with liveness, obligations (PACT §4.4.1)",
    tags=TAG,
    query=StatusQuery,
    response=StatusOut,
    access=Agent(),
    errors=ERRORS,
)
async def status(request: web.Request, query: StatusQuery) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.read() as session:
        found = await sessions.status(session, ctx, _topic(request), query.include)
    return sparse(StatusOut.of(found))


@routes.route(
    "GET",
    "/api/pact/{topicId}/manifest",
    summary="What concerns the calling agent: its constraints, obligations, counterparties (PACT §4.4.2)",
    tags=TAG,
    response=ManifestOut,
    access=Agent(),
    errors=ERRORS,
)
async def manifest(request: web.Request) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.read() as session:
        found = await sessions.manifest(session, ctx, _topic(request))
    return sparse(ManifestOut.of(found))


@routes.route(
    "POST",
    "/api/pact/{topicId}/_heartbeat",
    summary="Say the agent is present; answers the members' liveness (PACT §4.4.3)",
    tags=TAG,
    body=HeartbeatBody,
    response=HeartbeatOut,
    access=Agent(),
    errors=ERRORS,
)
async def heartbeat(request: web.Request, body: HeartbeatBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        beat = await sessions.heartbeat(
            session,
            ctx,
            _topic(request),
            client_heartbeat_id=body.client_heartbeat_id,
            attention_required=body.attention_required,
            observed_event_id=body.client_observed_event_id,
        )
    return sparse(HeartbeatOut.of(beat))


@routes.route(
    "POST",
    "/api/pact/{topicId}/mark-read",
    summary="Acknowledge the events [from, to]; the read cursor only moves forward (PACT §4.4.4)",
    tags=TAG,
    body=MarkReadBody,
    response=MarkReadOut,
    access=Agent(),
    errors={**ERRORS, 422: "The range is reversed or names events that do not exist"},
)
async def mark_read(request: web.Request, body: MarkReadBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        marked = await sessions.mark_read(
            session,
            ctx,
            _topic(request),
            from_event_id=body.from_event_id,
            to_event_id=body.to_event_id,
            from_seq=body.from_sequence_number,
            to_seq=body.to_sequence_number,
        )
    return sparse(MarkReadOut.of(marked))


@routes.route(
    "POST",
    "/api/pact/{topicId}/_onboard",
    summary="Join and publish constraints in one transaction: all or nothing (PACT §4.4.5)",
    tags=TAG,
    body=OnboardBody,
    response=TopicOnboarded,
    access=Agent(),
    errors={**ERRORS, **ONBOARD_ERRORS, **REMOVED_ERROR},
    refusals={422: OnboardRejected},
)
async def onboard(request: web.Request, body: OnboardBody) -> Answer:
    ctx = agent_context(request)
    drafts = [ConstraintDraft(c.sectionId, c.boundary, c.category or "") for c in body.constraints]
    try:
        async with runtime(request).db.transaction() as session:
            done = await sessions.onboard(
                session,
                ctx,
                _topic(request),
                drafts,
                pact_role=body.role,
                contact=body.contact.kept() if body.contact else None,
            )
    except Unprocessable as exc:  # a constraint refused: §4.4.5's rejection body, not an error
        if not is_refusal(exc):
            raise
        return Reply(OnboardRejected.of(exc, _topic(request)), status=422)
    reg = JoinResult.of(done.registration)
    return TopicOnboarded(registration=reg, **OnboardedOut.fields(done, reg.agentId))
