"""The auth matrix: every operation of both apps that needs a credential, read from the built apps, refuses
through HTTP a missing or malformed credential and every valid key of another kind (401), and a valid
key without the declared scope or role (403), before its input is read: the same request carrying an
invalid body or query still gets 401/403, while with a good key that input is refused as input."""

from __future__ import annotations

import re
import uuid
from collections import Counter
from typing import Any

import pytest
from pydantic import BaseModel

from tests.axiom_helpers import axiom_key, staff_headers
from tests.documents_support import make_key
from tests.people.support import person_headers
from web.docs.api import build_api as build_docs_api
from web.hub.api import build_api as build_hub_api
from web.kernel.access import Access, Anonymous, Commercial, Service, Staff
from web.kernel.routing import API, Operation

APPS = {"hub": build_hub_api(), "docs": build_docs_api()}
MATRIX = [
    (app, op) for app, api in APPS.items() for op in api.operations if not isinstance(op.access, Anonymous)
]

# Every operation per app and access kind. A new operation changes a count here on purpose: a route that
# needs a key is in the matrix by construction, and one that needs none has to be counted as such.
EXPECTED_COUNTS = {
    ("hub", "anonymous"): 49,
    ("hub", "agent"): 42,
    ("hub", "commercial"): 6,
    ("hub", "staff"): 22,  # + the review API's summaries, a topic's policy, removing and readmitting an agent
    ("docs", "anonymous"): 29,
    ("docs", "service"): 56,
}

# Anonymous operations that check a credential in their body (a password, a refresh token) and so may
# answer 401 although they need no key.
CREDENTIAL_IN_BODY = {
    ("POST", "/api/auth/login"),
    ("POST", "/api/auth/refresh"),
    ("POST", "/api/auth/logout"),
    ("POST", "/oauth/token"),  # a client secret (invalid_client)
    ("POST", "/oauth/revoke"),
    ("POST", "/oauth/authorize"),  # the consent form's password
}

STAFF_ROLES = ("curator", "reviewer")
SCOPES = ("documents:read", "documents:write", "comments:read", "comments:write", "tap:read", "tap:write")
MALFORMED = [
    {"Authorization": "Bearer"},
    {"Authorization": "Basic dXNlcjpwYXNz"},
    {"Authorization": "pact_sk_nobearerword"},
    {"Authorization": "Bearer pact_sk_" + "0" * 40},
    {"X-Api-Key": "pact_sk_wrong"},
    {"X-Api-Key": "pact_ax_" + "0" * 48},
    {"X-Api-Key": "svc_sk_" + "0" * 40},
    {"X-Api-Key": "staff_sk_" + "0" * 40},
    {"x-source-agent-key": "pact_sk_wrong"},
    {"Authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"},  # a forged JWT
]
NOT_JSON = b'{"truncated": '


def _id(case: tuple[str, Operation]) -> str:
    app, op = case
    return f"{app}:{op.method} {op.path}"


def _concrete(path: str) -> str:
    return re.sub(r"{\w+}", str(uuid.uuid4()), path)


def _reads_input(op: Operation) -> bool:
    """Whether the operation reads a body or query, so that a good key with bad input gets 400 (or 415:
    the upload reads a multipart body that OpenAPI describes apart)."""
    upload = (op.method, op.path) == ("POST", "/api/documents")
    return op.body is not None or op.documented_body is not None or op.query is not None or upload


def _bad_input(op: Operation) -> dict[str, Any]:
    """A request with an unreadable body (when the method carries one) and a query with NUL characters."""
    request: dict[str, Any] = {"params": {"q": "\x00", "limit": "\x00"}}
    if op.method != "GET":
        request.update(data=NOT_JSON, headers={"Content-Type": "application/json"})
    return request


async def _keys(hub: Any, runtime: Any, register: Any) -> dict[str, dict[str, str]]:
    """One valid key of each kind, as its owner would send it, and a signed-in person's access token."""
    agent = await register()
    commercial = await axiom_key(hub)
    service = await make_key(runtime, org="Matrix Org")
    return {
        "agent": agent["headers"],
        "commercial": commercial["headers"],
        "staff": await staff_headers(runtime),
        "service": service["headers"],
        "person": await person_headers(
            runtime, org="Matrix Org", scopes=list(SCOPES), email="matrix@example.org"
        ),
    }


async def _refused(resp: Any, app: str, status: int, access: Access) -> None:
    text = await resp.text()
    assert resp.status == status, text
    assert resp.headers["X-Request-Id"]
    body = await resp.json(content_type=None)
    if app == "docs":
        assert resp.content_type == "application/problem+json"
        assert body["status"] == status
        assert body["detail"]
        if status == 401:
            assert body["code"] in (
                "missing_api_key",
                "invalid_api_key",
                "revoked_api_key",
                "invalid_token",
            ), body
        else:
            assert isinstance(access, Service)
            assert body["code"] == "insufficient_scope"
            assert body["requiredScope"] == access.scope
    else:
        assert body["detail"]
        if status == 401:
            assert body["error"] == "unauthorized", body
        else:
            assert isinstance(access, Staff)
            assert body["error"] == "insufficient_role"
            assert body["requiredRole"] == access.role


def _merge(request: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    return {**request, "headers": {**request.get("headers", {}), **headers}}


def test_every_operation_is_counted_and_every_protected_one_is_in_the_matrix():
    counts = Counter((app, op.access.kind) for app, api in APPS.items() for op in api.operations)
    assert dict(counts) == EXPECTED_COUNTS
    assert Counter((app, op.access.kind) for app, op in MATRIX) == {
        case: n for case, n in EXPECTED_COUNTS.items() if case[1] != "anonymous"
    }
    assert len(MATRIX) == 126
    spec_ones = {(op.method, op.path): op.access.kind for _, op in MATRIX}
    assert spec_ones[("POST", "/api/pact/topics")] == "agent"
    assert spec_ones[("POST", "/api/pact/{topicId}/join")] == "agent"
    assert spec_ones[("POST", "/api/pact/{topicId}/escalate")] == "agent"
    assert spec_ones[("GET", "/api/audit/me")] == "agent"
    assert spec_ones[("GET", "/api/axiom/facts")] == "commercial"
    assert spec_ones[("POST", "/api/axiom/legislation/ingest")] == "staff"
    assert spec_ones[("POST", "/api/axiom/legislation/import")] == "staff"
    assert spec_ones[("POST", "/api/documents")] == "service"


def test_declared_scopes_are_the_service_key_scopes():
    from domain.documents import servicekeys

    assert set(SCOPES) == set(servicekeys.SCOPES)
    declared = {op.access.scope for _, op in MATRIX if isinstance(op.access, Service)}
    assert declared == set(SCOPES)


@pytest.mark.parametrize("case", MATRIX, ids=_id)
async def test_protected_operation_refuses_before_reading_input(hub, docs, runtime, register, case):
    app, op = case
    client = hub if app == "hub" else docs
    running = client.server.app[API]
    assert (op.method, op.path, op.access) in {(o.method, o.path, o.access) for o in running.operations}
    keys = await _keys(hub, runtime, register)
    path = _concrete(op.path)
    requests = [{}, _bad_input(op)]

    for request in requests:
        # No credential, on the path and on every alias.
        for each in (path, *(_concrete(alias) for alias in op.aliases)):
            await _refused(await client.request(op.method, each, **request), app, 401, op.access)
        for headers in MALFORMED:
            resp = await client.request(op.method, path, **_merge(request, headers))
            await _refused(resp, app, 401, op.access)
        # A valid key of every other kind, as Bearer and as X-Api-Key (a person's token is one of the
        # document API's credentials: elsewhere it is another kind).
        for kind, headers in keys.items():
            if kind == op.access.kind or (kind == "person" and isinstance(op.access, Service)):
                continue
            secret = next(iter(headers.values())).removeprefix("Bearer ")
            for sent in ({"Authorization": f"Bearer {secret}"}, {"X-Api-Key": secret}):
                resp = await client.request(op.method, path, **_merge(request, sent))
                await _refused(resp, app, 401, op.access)
        # The right kind without what the declaration asks for.
        if isinstance(op.access, Service):
            lacking = await make_key(
                runtime, org="Matrix Org", scopes=",".join(s for s in SCOPES if s != op.access.scope)
            )
            resp = await client.request(op.method, path, **_merge(request, lacking["headers"]))
            await _refused(resp, app, 403, op.access)
            person = await person_headers(
                runtime,
                org="Matrix Org",
                scopes=[s for s in SCOPES if s != op.access.scope],
                email=f"lacking-{len(requests)}-{uuid.uuid4().hex[:8]}@example.org",
            )
            resp = await client.request(op.method, path, **_merge(request, person))
            await _refused(resp, app, 403, op.access)
        if isinstance(op.access, Staff) and op.access.role is not None:
            other = next(role for role in STAFF_ROLES if role != op.access.role)
            lacking_role = await staff_headers(runtime, name="Matrix Staff", roles=(other,))
            resp = await client.request(op.method, path, **_merge(request, lacking_role))
            await _refused(resp, app, 403, op.access)

    if _reads_input(op):
        # With a good key the same input is refused as input: the requests above really were invalid.
        resp = await client.request(op.method, path, **_merge(requests[1], keys[op.access.kind]))
        assert resp.status in (400, 415), await resp.text()


async def test_openapi_shows_each_operations_access(hub, docs):
    for app, client in (("hub", hub), ("docs", docs)):
        spec = await (await client.get("/openapi.json")).json()
        for op in APPS[app].operations:
            entry = spec["paths"][op.path][op.method.lower()]
            access = op.access
            assert entry["x-access"]["kind"] == access.kind
            if isinstance(access, Anonymous):
                assert "security" not in entry
                assert ("401" in entry["responses"]) == ((op.method, op.path) in CREDENTIAL_IN_BODY)
                continue
            assert access.scheme in spec["components"]["securitySchemes"]
            assert "401" in entry["responses"]
            if isinstance(access, Service):
                assert entry["security"] == [{"apiKey": [access.scope]}]
                assert entry["x-access"]["scope"] == access.scope
                assert access.scope in entry["description"]
                assert "403" in entry["responses"]
            elif isinstance(access, Staff):
                assert entry["security"] == [{"staffBearer": [access.role] if access.role else []}]
                assert entry["x-access"]["role"] == access.role
            elif isinstance(access, Commercial):
                assert entry["security"] == [{"commercialBearer": []}]
                assert entry["x-access"]["metered"] == access.metered
                assert ("402" in entry["responses"]) == access.metered
            else:
                assert entry["security"] == [{"agentBearer": []}]


async def test_each_metered_call_is_charged_once_and_bad_input_or_usage_never(hub, runtime):
    key = await axiom_key(hub)
    metered = [op for op in APPS["hub"].operations if isinstance(op.access, Commercial) and op.access.metered]
    assert len(metered) == 5
    valid_query = {"/api/axiom/legislation/search": {"q": "safety"}}

    async def queries() -> int:
        resp = await hub.get("/api/axiom/usage", headers=key["headers"])
        assert resp.status == 200
        return (await resp.json())["queries"]

    for op in metered:
        before = await queries()
        if op.query is not None:
            bad = {"limit": "0", "format": "xml"}
            resp = await hub.get(_concrete(op.path), params=bad, headers=key["headers"])
            assert resp.status == 400, await resp.text()
            assert await queries() == before, f"{op.path}: a bad query was charged"
        resp = await hub.get(_concrete(op.path), params=valid_query.get(op.path, {}), headers=key["headers"])
        # As before: a well-formed query is charged once answered, a missing id included.
        assert resp.status in (200, 404), await resp.text()
        assert await queries() == before + 1, op.path


async def test_a_staff_role_is_enforced_after_the_key_and_before_the_body(aiohttp_client, runtime):
    """A route declared for reviewers refuses a curator's key (403) before reading the body, admits a
    reviewer's and a key holding both roles, and a revoked reviewer key is 401."""
    from aiohttp import web

    from web.hub import api as hub_api
    from web.hub import auth
    from web.kernel.appkeys import BODY_LIMIT, ERROR_STYLE, RUNTIME
    from web.kernel.errors import HubError
    from web.kernel.middleware import request_context
    from web.kernel.routing import Api, Routes, json_response

    class Decision(BaseModel):
        decision: str

    table = Routes()

    @table.route(
        "POST",
        "/desk",
        summary="Decide",
        tags=["Review"],
        body=Decision,
        response=Decision,
        access=Staff(role="reviewer"),
    )
    async def decide(request: web.Request, body: Decision) -> web.Response:
        return json_response({"decision": body.decision})

    api = Api(
        "desk",
        "1",
        "",
        HubError,
        tables=[table],
        security_schemes=hub_api.SECURITY_SCHEMES,
        guards=auth.GUARDS,
    )
    app = web.Application(middlewares=[request_context])
    app[RUNTIME] = runtime
    app[API] = api
    app[ERROR_STYLE] = "hub"
    app[BODY_LIMIT] = 1024
    api.add_routes(app)
    client = await aiohttp_client(app)
    access = api.operations[0].access
    curator = await staff_headers(runtime, name="Cora", roles=("curator",))
    reviewer = await staff_headers(runtime, name="Rey", roles=("reviewer",))
    both = await staff_headers(runtime, name="Bo", roles=("curator,reviewer",))
    json_type = {"Content-Type": "application/json"}
    for data in (b'{"decision": "approve"}', NOT_JSON):
        resp = await client.post("/desk", data=data, headers=json_type)
        await _refused(resp, "hub", 401, access)
        resp = await client.post("/desk", data=data, headers={**json_type, **curator})
        await _refused(resp, "hub", 403, access)
    for headers in (reviewer, both):
        resp = await client.post("/desk", data=b'{"decision": "approve"}', headers={**json_type, **headers})
        assert resp.status == 200, await resp.text()
        assert await resp.json() == {"decision": "approve"}
        resp = await client.post("/desk", data=NOT_JSON, headers={**json_type, **headers})
        assert resp.status == 400, await resp.text()
    from domain.kernel.context import SYSTEM
    from domain.people import staff

    async with runtime.db.read() as session:
        rey = next(k for k in await staff.list_keys(session) if k["name"] == "Rey")
    async with runtime.db.transaction() as session:
        await staff.revoke(session, SYSTEM, rey["id"])
    resp = await client.post("/desk", data=b'{"decision": "approve"}', headers={**json_type, **reviewer})
    await _refused(resp, "hub", 401, access)
    spec = api.openapi()["paths"]["/desk"]["post"]
    assert spec["security"] == [{"staffBearer": ["reviewer"]}]
    assert "403" in spec["responses"]


def test_an_app_refuses_to_build_with_an_access_it_cannot_check():
    from web.hub import auth
    from web.kernel.errors import Problem
    from web.kernel.routing import Api, Routes

    table = Routes()

    @table.route("GET", "/x", summary="x", tags=["x"], access=Service("tap:read"))
    async def x(request: Any) -> Any:
        raise AssertionError

    with pytest.raises(ValueError, match="cannot check"):
        Api("x", "1", "", Problem, tables=[table], security_schemes={"apiKey": {}}, guards=auth.GUARDS)


def _schema_invalid(op: Operation) -> dict[str, Any]:
    """Well-formed JSON that breaks the operation's model in every field (and carries one it does not know),
    and a query whose every parameter has a value of the wrong kind."""
    model = op.body or op.documented_body
    fields = list(model.model_fields) if model is not None else []
    body: dict[str, Any] = {name: {"not": ["what", "it", "takes"]} for name in fields}
    body["unknownField"] = -1
    request: dict[str, Any] = {"params": {n: "\x00" for n in (op.query.model_fields if op.query else ())}}
    if op.method != "GET":
        request["json"] = body
    return request


@pytest.mark.parametrize("app", ["hub", "docs"])
async def test_a_bad_body_without_a_key_is_refused_as_unauthenticated(hub, docs, runtime, app):
    """Walks every secured route (and alias) of the app as the served router has it: a schema-invalid JSON
    body or query without a key, or with a key that does not exist, is refused with 401, never 400."""
    client = hub if app == "hub" else docs
    running = client.server.app[API]
    secured = [op for op in running.operations if not isinstance(op.access, Anonymous)]
    assert len(secured) == sum(
        n for (a, kind), n in EXPECTED_COUNTS.items() if a == app and kind != "anonymous"
    )
    walked = 0
    for op in secured:
        request = _schema_invalid(op)
        for each in (op.path, *op.aliases):
            path = _concrete(each)
            for headers in ({}, MALFORMED[3], MALFORMED[6]):
                resp = await client.request(op.method, path, **_merge(request, headers))
                await _refused(resp, app, 401, op.access)
                walked += 1
    assert walked >= 3 * len(secured)
