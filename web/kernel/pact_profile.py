"""`GET /.well-known/pact.json` on both apps: the PACT implementation profile (v2.0.3 §15.1), built on each
request from what the answering app routes (domain/pact/profile.py), so it cannot claim an operation the app
does not serve nor miss one it does. Anonymous, as the discovery documents are, and cacheable."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from aiohttp import web
from pydantic import BaseModel, Field

from domain.consensus.policies import ApprovalPolicy
from domain.kernel import log_roots
from domain.kernel.event_record import EntityType
from domain.pact import profile as pact
from web.kernel.appkeys import APP_NAME
from web.kernel.replies import Answer, Reply
from web.kernel.request import runtime
from web.kernel.routing import API, Api, Routes
from web.kernel.sse import request_realtime_endpoint
from web.kernel.wire import Exact

routes = Routes()

PATH = "/.well-known/pact.json"
CACHE = {"Cache-Control": "public, max-age=300"}


class PactResourceType(Exact):
    """A resource type this app serves (§14.1, §15.1)."""

    type: str = Field(description="PACT's resource type identifier (the §14.3 registry's)")
    entityType: EntityType = Field(description="What this resource's events carry as entityType (§6.1)")
    fieldSchema: str = Field(description="How a field (a section) of the resource is addressed")
    proposalPayload: str = Field(description="The fields of a proposal's body; `?` marks an optional one")
    contentFormat: str = Field(description="How the resource's body is represented (a media type)")
    terminalStates: list[str] = Field(description="What a proposal that reached consensus ends as")
    applySemantics: str = Field(description="What happens when a proposal reaches consensus")
    approvalPolicies: list[ApprovalPolicy] = Field(
        description="The approval policies (§5) a resource of this type may be given by its owner"
    )
    defaultApprovalPolicy: ApprovalPolicy = Field(description="The policy of a resource created without one")


class PactRetentionPolicy(Exact):
    """How long the event log is kept (§6.3)."""

    minimumDays: int = Field(ge=0, description="Days every event is kept at least")
    indefinite: bool = Field(description="Kept for as long as the resource exists")
    tombstoneAfter: int | None = Field(description="Days after which events become tombstones; null: never")


class PactEndpoints(Exact):
    rest: str = Field(description="Base of the PACT REST operations: {rest}/{resourceId}/...")
    realtime: str = Field(
        description="The per-resource live event stream (Server-Sent Events, §7.2); {id} is the resource's id"
    )
    logSigningKey: str = Field(
        description="The public key (a did:key, Ed25519) signing the event log's pact.log.root events (§6.4)"
    )


class PactProfileOperation(Exact):
    """A PACT operation this app serves."""

    operation: pact.PactOperation = Field(
        description="The operation, named as PACT §4 names it where it does"
    )
    method: str = Field(description="HTTP method")
    path: str = Field(description="This app's path for it ({...} are placeholders)")
    specSection: str = Field(description="Where the PACT specification defines it")
    core: bool = Field(description="Part of the Core conformance level (§15.2) this profile claims")
    specPath: bool = Field(
        description="The specification's own path (false: it names none, this is Concord's)"
    )


class PactProfile(Exact):
    """PACT implementation profile (v2.0.3 §15.1)."""

    name: str
    version: str = Field(description="Concord's version")
    specVersion: str = Field(description="The PACT specification version implemented")
    conformanceLevel: pact.ConformanceLevel
    resourceTypes: list[PactResourceType]
    capabilities: dict[pact.Capability, bool] = Field(
        description="Every capability flag, true or false: §15.1's well-known ones and Concord's own "
        "(realtimeEvents, hashChainedEvents, signedLogRoots, tierIntrospection)"
    )
    retentionPolicy: PactRetentionPolicy
    endpoints: PactEndpoints
    operations: list[PactProfileOperation] = Field(
        description="The PACT operations this app serves, derived from its routes"
    )


def route_pairs(api: Api) -> list[tuple[str, str]]:
    """Every (method, path) the app routes, aliases included."""
    return [(op.method, path) for op in api.operations for path in (op.path, *op.aliases)]


def proposal_payload(api: Api) -> str:
    """The fields of the app's proposal body, from the model that validates it."""
    create = next(spec for spec in pact.CATALOGUE if spec.operation is pact.PactOperation.PROPOSAL_CREATE)
    for op in api.operations:
        shapes = {(op.method, pact.path_shape(path)) for path in (op.path, *op.aliases)}
        if create.shape in shapes and op.body is not None:
            return _fields_of(op.body)
    return "{ }"


def _fields_of(model: type[BaseModel]) -> str:
    return pact.payload_shape((name, field.is_required()) for name, field in model.model_fields.items())


RESOURCE_TYPES: dict[str, Callable[[str], pact.ResourceType]] = {
    "hub": pact.topic_type,
    "documents": pact.document_type,
}


def _base_url(request: web.Request) -> str:
    configured = runtime(request).settings.public_url
    return configured.rstrip("/") if configured else f"{request.scheme}://{request.host}"


def to_wire(found: pact.Profile) -> PactProfile:
    return PactProfile(
        name=found.name,
        version=found.version,
        specVersion=found.spec_version,
        conformanceLevel=found.conformance_level,
        resourceTypes=[
            PactResourceType(
                type=rt.type,
                entityType=rt.entity_type,
                fieldSchema=rt.field_schema,
                proposalPayload=rt.proposal_payload,
                contentFormat=rt.content_format,
                terminalStates=list(rt.terminal_states),
                applySemantics=rt.apply_semantics,
                approvalPolicies=list(rt.approval_policies),
                defaultApprovalPolicy=rt.default_approval_policy,
            )
            for rt in found.resource_types
        ],
        capabilities=found.capabilities,
        retentionPolicy=PactRetentionPolicy(
            minimumDays=found.retention_policy.minimum_days,
            indefinite=found.retention_policy.indefinite,
            tombstoneAfter=found.retention_policy.tombstone_after,
        ),
        endpoints=PactEndpoints(
            rest=found.endpoints.rest,
            realtime=found.endpoints.realtime,
            logSigningKey=found.endpoints.log_signing_key,
        ),
        operations=[
            PactProfileOperation(
                operation=op.spec.operation,
                method=op.spec.method,
                path=op.path,
                specSection=op.spec.section,
                core=op.spec.core,
                specPath=op.spec.spec_path,
            )
            for op in found.operations
        ],
    )


@routes.route(
    "GET",
    PATH,
    summary="PACT implementation profile (§15.1): resource types, capabilities, retention, endpoints and the "
    "PACT operations this app serves",
    tags=["PACT"],
    response=PactProfile,
)
async def implementation_profile(request: web.Request) -> Answer:
    api = request.app[API]
    resource_type = RESOURCE_TYPES[request.app[APP_NAME]](proposal_payload(api))
    # The key is read (or generated once) from the data directory on first use: off the event loop.
    key = await asyncio.to_thread(log_roots.signing_key_id, runtime(request).settings)
    endpoints = pact.Endpoints(
        rest=f"{_base_url(request)}/api/pact",
        realtime=request_realtime_endpoint(request),
        log_signing_key=key,
    )
    found = pact.build(route_pairs(api), resource_type, endpoints)
    return Reply(to_wire(found), headers=CACHE)
