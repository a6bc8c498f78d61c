"""The PACT conformance lab's web layer (`concord pact lab`, never `concord serve`): the document app, which
serves PACT's paths at the root (`/api/pact/{id}/…`), plus what the conformance runner relies on.

- Identity as the vectors give it: a request without a credential that carries `X-Pact-Principal: <DID>`
  (or, without one, is on a fixture whose vector names a caller) is handed to the app with that principal's
  lab key (domain/lab/fixtures.py) as `X-Api-Key`. The app itself authenticates as always: this middleware
  exists only in the app this module builds, so the normal apps ignore the header (tests prove it).
- `POST /__reset`: every table emptied and the fixtures seeded again, as the runner asks before a run.
- The vectors' dialect (web/lab/dialect.py): a proposal that names its own `proposalId`, a bodiless done.
- Existence hiding on `_status`: a caller that is not a member, or names a resource that does not exist, gets
  the same empty snapshot (no members, nothing pending) instead of 403 or 404. It tells a stranger nothing
  (an unknown id answers alike), and it is what PACT's onboard-partial-failure vector reads after a refused
  onboarding, where §4.4.1 and §17.13 say 403 or 404: the apps `concord serve` runs keep the spec's 403
  (docs/decisions.md "Conformance vectors against the spec").

The join-token path stays anonymous: no principal is put on it."""

from __future__ import annotations

import re

from aiohttp import web
from aiohttp.typedefs import Handler
from multidict import CIMultiDict

from domain.consensus import sessions
from domain.consensus.phases import Phase
from domain.kernel.clock import utcnow
from domain.kernel.settings import get_settings
from domain.lab.fixtures import BY_ID, Lab
from runtime.process import Runtime
from web.app import create_docs_app
from web.docs.agents.sessions import ONBOARD_POLICY
from web.kernel.errors import render
from web.kernel.routing import json_response
from web.kernel.sessions_wire import StatusOut, sparse
from web.lab.dialect import vector_dialect

PRINCIPAL_HEADER = "X-Pact-Principal"
# A DID as the vectors write them (did:<method>:<id>), bounded.
DID = re.compile(r"^did:[a-z0-9]+:[A-Za-z0-9._:%-]{1,200}$")
RESOURCE = re.compile(r"^/api/(?:pact|tap)/([^/]+)(/.*)?$")
ANONYMOUS_SUFFIXES = ("/join-token",)
LAB = web.AppKey("pact_lab", Lab)


def principal_of(request: web.Request) -> str | None:
    """The principal a credential-less request acts as: the header's, else its fixture's default."""
    given = request.headers.get(PRINCIPAL_HEADER)
    if given is not None:
        return given.strip()
    found = RESOURCE.match(request.path)
    if found is None or (found.group(2) or "").endswith(ANONYMOUS_SUFFIXES):
        return None
    fixture = BY_ID.get(found.group(1))
    return fixture.default_principal if fixture else None


@web.middleware
async def lab_identity(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.headers.get("X-Api-Key") or request.headers.get("Authorization"):
        return await handler(request)  # a real credential wins; the principal header is not read
    principal = principal_of(request)
    if principal is None:
        return await handler(request)
    if not DID.match(principal):
        return render(
            "problem",
            400,
            "principal.invalid",
            f"{PRINCIPAL_HEADER} must be a DID such as did:web:alice.example",
            extra={"field": PRINCIPAL_HEADER},
        )
    secret = await request.app[LAB].key_for(principal)
    headers = CIMultiDict(request.headers)
    headers.popall(PRINCIPAL_HEADER, None)
    headers["X-Api-Key"] = secret
    return await handler(request.clone(headers=headers))


@web.middleware
async def hide_existence(request: web.Request, handler: Handler) -> web.StreamResponse:
    response = await handler(request)
    found = RESOURCE.match(request.path)
    if (
        request.method != "GET"
        or found is None
        or found.group(2) != "/_status"
        or response.status not in (403, 404)
    ):
        return response
    timeout = get_settings().pact_heartbeat_timeout_seconds
    empty = sessions.Status(
        fabric_id=found.group(1),
        parts=sessions.ALL_PARTS,
        phase=Phase.FORMING,
        latest_seq=0,
        members=[],
        obligations=[],
        open_proposals=0,
        open_intents=0,
        heartbeat_timeout_seconds=timeout,
        snapshot_at=utcnow(),
    )
    return json_response(sparse(StatusOut.of(empty)))  # the lab's dialect answers before any operation


def policy_of(resource_id: str) -> dict[str, int]:
    """A fixture's disclosure policy (the vector's `fabric_policy`), which `_onboard` enforces."""
    fixture = BY_ID.get(resource_id)
    return dict(fixture.policy) if fixture else {}


async def reset(request: web.Request) -> web.Response:
    await request.app[LAB].reset()
    return json_response({"reset": True})  # the lab's own control route, outside the Api


def create_lab_app(rt: Runtime, lab: Lab) -> web.Application:
    app = create_docs_app(rt)
    app[LAB] = lab
    app[ONBOARD_POLICY] = policy_of
    app.middlewares.insert(0, lab_identity)  # outermost: the app sees the key as if the caller sent it
    app.middlewares.insert(1, hide_existence)
    app.middlewares.append(vector_dialect)  # innermost: the app's error handling renders its refusals
    app.router.add_post("/__reset", reset)
    return app
