"""PACT v2.0.3 session awareness on a document (§4.4): `/api/pact/{docId}/_status`, `manifest`,
`_heartbeat`, `mark-read` and `_onboard` (also under `/api/tap/{docId}/…`), with the document API's
service keys and the agents they joined as."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated

from aiohttp import web
from pydantic import ConfigDict, Field

from domain.consensus.records import ConstraintType, ConstraintTypeField
from domain.consensus.sessions import ConstraintDraft
from domain.documents import agents as tap
from domain.documents import sessions
from domain.documents.membership import ROLE_CAPABILITIES, DocumentRole
from domain.kernel.errors import Unprocessable
from web.docs.agents.paths import doc_id, document_route
from web.docs.auth import caller
from web.docs.schemas import Capability, Joined, Role, role_limits
from web.kernel.access import Service
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
from web.kernel.wire import HAS_LETTER_OR_DIGIT, Text

routes = Routes()
route = document_route(routes)
# A document's disclosure policy for onboarding (its `max_<section>` ceilings), for the apps that have one:
# only the PACT conformance lab sets it (web/lab/app.py); `concord serve` has no such policy.
OnboardPolicy = Callable[[str], Mapping[str, int]]
ONBOARD_POLICY: web.AppKey[OnboardPolicy] = web.AppKey("onboard_policy")


class OnboardConstraint(Request):
    sectionId: Text = Field(min_length=1, max_length=256)
    boundary: Text = Field(min_length=1, max_length=2_000)
    type: ConstraintTypeField = Field(
        default=ConstraintType.MUST_NOT, description="The constraint's type, as POST …/constraints takes it."
    )
    category: str | None = Field(
        default=None,
        max_length=64,
        description="PACT's free category; documents classify constraints by `type` and do not keep it.",
    )


class OnboardBody(Request):
    """A join's fields (all optional: without agentName the key's name is the agent's) and the constraints
    to publish with it, all or none. Its schema states each role's limit on capabilities, as a join's does
    (PACT's contributor and proposer have an editor's)."""

    model_config = ConfigDict(
        json_schema_extra=role_limits(
            {
                **ROLE_CAPABILITIES,
                **{str(pact): ROLE_CAPABILITIES[doc] for pact, doc in sessions.DOCUMENT_ROLE.items()},
            }
        )
    )

    agentName: Annotated[str, HAS_LETTER_OR_DIGIT] | None = Field(default=None, min_length=1, max_length=128)
    role: Role | sessions.PactRole = Field(
        default=DocumentRole.EDITOR,
        description="A document role, or PACT's role descriptor (contributor and proposer join as editor, "
        "observer as observer); the answer and the event carry it as given.",
    )
    capabilities: list[Capability] | None = Field(default=None, max_length=20)
    inviteToken: str | None = Field(default=None, max_length=200)
    invite_token: str | None = Field(default=None, max_length=200)
    constraints: list[OnboardConstraint] = Field(default_factory=list, max_length=50)
    contact: ContactIn | None = None


class DocumentOnboarded(OnboardedOut):
    registration: Joined


@route(
    "GET",
    "/_status",
    summary="The document's session snapshot: phase, members with liveness, obligations (PACT §4.4.1)",
    query=StatusQuery,
    response=StatusOut,
    errors=SESSION_ERRORS,
    access=Service("tap:read"),
)
async def status(request: web.Request, query: StatusQuery) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await sessions.status(session, who, doc_id(request), query.include)
    return sparse(StatusOut.of(found))


@route(
    "GET",
    "/manifest",
    summary="What concerns the calling agent: its constraints, obligations, counterparties (PACT §4.4.2)",
    response=ManifestOut,
    errors=SESSION_ERRORS,
    access=Service("tap:read"),
)
async def manifest(request: web.Request) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await sessions.manifest(session, who, doc_id(request))
    return sparse(ManifestOut.of(found))


@route(
    "POST",
    "/_heartbeat",
    summary="Say the agent is present; answers the members' liveness (PACT §4.4.3)",
    body=HeartbeatBody,
    response=HeartbeatOut,
    errors=SESSION_ERRORS,
    access=Service("tap:write"),
)
async def heartbeat(request: web.Request, body: HeartbeatBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        beat = await sessions.heartbeat(
            session,
            who,
            doc_id(request),
            client_heartbeat_id=body.client_heartbeat_id,
            attention_required=body.attention_required,
            observed_event_id=body.client_observed_event_id,
        )
    return sparse(HeartbeatOut.of(beat))


@route(
    "POST",
    "/mark-read",
    summary="Acknowledge the events [from, to]; the read cursor only moves forward (PACT §4.4.4)",
    body=MarkReadBody,
    response=MarkReadOut,
    errors={**SESSION_ERRORS, 422: "The range is reversed or names events that do not exist"},
    access=Service("tap:write"),
)
async def mark_read(request: web.Request, body: MarkReadBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        marked = await sessions.mark_read(
            session,
            who,
            doc_id(request),
            from_event_id=body.from_event_id,
            to_event_id=body.to_event_id,
            from_seq=body.from_sequence_number,
            to_seq=body.to_sequence_number,
        )
    return sparse(MarkReadOut.of(marked))


@route(
    "POST",
    "/_onboard",
    summary="Join and publish constraints in one transaction: all or nothing (PACT §4.4.5)",
    body=OnboardBody,
    response=DocumentOnboarded,
    errors={**ONBOARD_ERRORS, 409: "Already joined, or the document is still converting"},
    refusals={422: OnboardRejected},
    access=Service("tap:write"),
)
async def onboard(request: web.Request, body: OnboardBody) -> Answer:
    who = caller(request)
    declared = body.role if isinstance(body.role, sessions.PactRole) else None
    join = tap.JoinRequest(
        body.agentName or "",  # none: the key's name
        role=sessions.DOCUMENT_ROLE[declared] if declared else body.role,
        capabilities=body.capabilities,
        invite_token=body.inviteToken or body.invite_token,
    )
    drafts = [ConstraintDraft(c.sectionId, c.boundary, c.type) for c in body.constraints]
    policy = request.config_dict.get(ONBOARD_POLICY)
    ceilings = policy(doc_id(request)) if policy else None
    try:
        async with runtime(request).db.transaction() as session:
            done = await sessions.onboard(
                session,
                who,
                doc_id(request),
                join,
                drafts,
                declared_role=declared,
                contact=body.contact.kept() if body.contact else None,
                ceilings=ceilings,
            )
    except Unprocessable as exc:  # a constraint refused: §4.4.5's rejection body, not a problem
        if not is_refusal(exc):
            raise
        return Reply(OnboardRejected.of(exc, doc_id(request)), status=422)
    reg = Joined.of(done.registration)
    return DocumentOnboarded(registration=reg, **OnboardedOut.fields(done, reg.agentId))
