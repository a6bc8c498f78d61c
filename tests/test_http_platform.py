"""Platform rules on the wire (DESIGN.md wire conventions, issue 2 Platform): X-Request-Id on every
response, body limits (413), hub errors on 8080 and RFC 7807 on 8081, unknown routes and methods,
/openapi.json (OpenAPI 3.1.0, version 1.0.0) on both apps, and no input ever producing a 500."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
import regress
from aiohttp import web
from openapi_schema_validator import oas31_format_checker
from openapi_spec_validator import validate

from tests.test_topics import create_topic
from web.kernel.appkeys import BODY_LIMIT, ERROR_STYLE
from web.kernel.errors import render
from web.kernel.middleware import request_context

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


# --- X-Request-Id -----------------------------------------------------------------------------------


async def test_request_id_is_echoed_on_success_and_on_every_error(hub, register, settings, monkeypatch):
    monkeypatch.setattr(settings, "rate_limit_register", 2)
    agent = await register()
    cases: list[tuple[str, str, dict[str, Any], int]] = [
        ("GET", "/healthz", {}, 200),
        ("GET", "/api/pact/topics", {}, 200),
        ("GET", "/api/pact/topics?limit=0", {}, 400),
        ("POST", "/api/pact/topics", {}, 401),
        ("GET", f"/api/pact/{uuid.uuid4()}/content", {}, 404),
        ("GET", "/no/such/route", {}, 404),
        ("DELETE", "/api/hub/stats", {}, 405),
        ("POST", "/api/pact/register", {"json": {"agentName": agent["agentName"]}}, 409),
        ("POST", "/api/pact/register", {"data": b"x" * 1_100_000}, 413),
        ("POST", "/api/pact/register", {"json": {"agentName": "over-the-limit"}}, 429),
        ("GET", "/openapi.json", {}, 200),
    ]
    for n, (method, path, kwargs, status) in enumerate(cases):
        rid = f"test-{n}.rid:{uuid.uuid4().hex[:6]}"
        resp = await hub.request(method, path, headers={"X-Request-Id": rid}, **kwargs)
        assert resp.status == status, (method, path, await resp.text())
        assert resp.headers["X-Request-Id"] == rid, (method, path)


async def test_request_id_is_generated_when_absent_or_unusable(hub):
    seen = set()
    for given in (None, "", "has spaces", "x" * 129, "semi;colon", "ünïcode"):
        headers = {} if given is None else {"X-Request-Id": given}
        resp = await hub.get("/api/hub/stats", headers=headers)
        rid = resp.headers["X-Request-Id"]
        assert UUID_RE.match(rid), rid
        seen.add(rid)
        missing = await hub.get("/nowhere", headers=headers)
        assert UUID_RE.match(missing.headers["X-Request-Id"])
    assert len(seen) == 6  # one per request


async def test_generated_request_ids_are_random_version_4_uuids(hub):
    ids = []
    for _ in range(200):
        resp = await hub.get("/api/hub/stats")
        ids.append(resp.headers["X-Request-Id"])
    assert len(set(ids)) == len(ids)
    for rid in ids:
        parsed = uuid.UUID(rid)
        assert (parsed.version, parsed.variant, str(parsed)) == (4, uuid.RFC_4122, rid)
    # Random, not a counter: the ids share no common prefix beyond what chance gives.
    assert len({rid[:4] for rid in ids}) > 100


async def test_request_id_on_the_document_app(docs):
    resp = await docs.get("/healthz", headers={"X-Request-Id": "docs-1"})
    assert resp.headers["X-Request-Id"] == "docs-1"
    resp = await docs.get("/nowhere")
    assert UUID_RE.match(resp.headers["X-Request-Id"])


# --- body limits ------------------------------------------------------------------------------------


async def test_body_past_the_limit_is_413_in_hub_format(hub, runtime):
    limit = runtime.settings.max_body_bytes
    resp = await hub.post(
        "/api/pact/register",
        data=b'{"agentName": "' + b"a" * limit + b'"}',
        headers={"Content-Type": "application/json", "X-Request-Id": "big-1"},
    )
    assert resp.status == 413
    assert resp.content_type == "application/json"
    assert resp.headers["X-Request-Id"] == "big-1"
    body = await resp.json()
    assert body == {
        "error": "payload_too_large",
        "detail": f"request body is larger than the {limit} bytes allowed",
    }


async def test_body_limit_follows_the_setting_and_applies_to_chunked_bodies(
    aiohttp_client, runtime, settings, monkeypatch, register
):
    from web.app import create_hub_app

    monkeypatch.setattr(settings, "max_body_bytes", 2048)
    hub = await aiohttp_client(create_hub_app(runtime))
    ok = await hub.post("/api/pact/register", json={"agentName": "small", "description": "d" * 1000})
    assert ok.status == 201
    key = (await ok.json())["apiKey"]

    async def chunks():
        for _ in range(10):
            yield b" " * 512

    for data in (b"{" + b" " * 4096 + b"}", chunks()):
        resp = await hub.post(
            "/api/pact/topics",
            data=data,
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
        assert resp.status == 413
        body = await resp.json()
        assert body["error"] == "payload_too_large"
        assert "2048 bytes" in body["detail"]


# --- unknown routes, wrong methods, error formats ---------------------------------------------------


@pytest.mark.parametrize("path", ["/nope", "/api", "/api/pact", "/api/hub/nothing", "/api/pact/a/b/c/d"])
async def test_unknown_route_is_404_in_hub_format(hub, path):
    resp = await hub.get(path)
    assert resp.status == 404
    assert resp.content_type == "application/json"
    assert await resp.json() == {"error": "not_found", "detail": f"no route for GET {path}"}


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("DELETE", "/api/hub/stats", {"GET"}),
        ("PUT", "/api/pact/register", {"GET", "POST"}),
        ("PATCH", "/api/audit/me", {"GET"}),
        ("POST", "/api/hub/graph", {"GET"}),
    ],
)
async def test_wrong_method_is_405_in_hub_format_with_allow(hub, method, path, allowed):
    resp = await hub.request(method, path)
    assert resp.status == 405
    assert resp.content_type == "application/json"
    body = await resp.json()
    assert body == {"error": "method_not_allowed", "detail": f"{method} is not allowed on {path}"}
    assert {m.strip() for m in resp.headers["Allow"].split(",")} >= allowed


async def test_document_app_answers_rfc7807(docs):
    resp = await docs.get("/api/nothing-here")
    assert resp.status == 404
    assert resp.content_type == "application/problem+json"
    body = await resp.json()
    assert body["status"] == 404
    assert body["title"] == "Not Found"
    assert body["type"].startswith("http")
    assert body["detail"] == "no route for GET /api/nothing-here"

    resp = await docs.post("/healthz")
    assert resp.status == 405
    assert resp.content_type == "application/problem+json"
    body = await resp.json()
    assert body["status"] == 405
    assert body["title"] == "Method Not Allowed"
    assert "POST" in body["detail"]
    assert "GET" in resp.headers["Allow"]


@pytest.mark.parametrize("style", ["hub", "problem"])
async def test_an_unexpected_error_is_a_500_without_a_trace(aiohttp_client, style):
    """The shared middleware turns a crash into the app's error format, quoting the request id only."""

    async def boom(_request: web.Request) -> web.Response:
        raise RuntimeError("secret internals: /etc/passwd line 42")

    app = web.Application(middlewares=[request_context])
    app[ERROR_STYLE] = style
    app[BODY_LIMIT] = 1024
    app.router.add_get("/boom", boom)
    client = await aiohttp_client(app)
    resp = await client.get("/boom", headers={"X-Request-Id": "crash-1"})
    assert resp.status == 500
    text = await resp.text()
    assert "secret" not in text
    assert "Traceback" not in text
    assert "crash-1" in text
    assert resp.headers["X-Request-Id"] == "crash-1"
    body = await resp.json()
    if style == "hub":
        assert set(body) == {"error", "detail"}
        assert body["error"] == "internal_error"
    else:
        assert body["status"] == 500
        assert resp.content_type == "application/problem+json"


def test_render_drops_empty_extras():
    resp = render("hub", 400, "validation_error", "bad", extra={"field": None, "missing": ["x"]})
    assert resp.body == b'{"error":"validation_error","detail":"bad","missing":["x"]}'


# --- /openapi.json ----------------------------------------------------------------------------------


def _ecma_regex(instance: object) -> bool:
    if isinstance(instance, str):
        regress.Regex(instance, "u")  # raises RegressError for what ECMA 262 (unicode mode) refuses
    return True


async def test_openapi_documents_are_valid_openapi_3_1(hub, docs, monkeypatch):
    # JSON Schema 2020-12 (so OpenAPI 3.1) patterns are ECMA 262 regular expressions; the validator's own
    # `regex` format check compiles them with Python's `re`, which refuses valid ECMA (`\p{L}`, a letter of
    # any script) and accepts Python-only syntax (`(?P<name>…)`). Checked here with an ECMA 262 engine.
    monkeypatch.setitem(oas31_format_checker.checkers, "regex", (_ecma_regex, regress.RegressError))
    for client in (hub, docs):
        resp = await client.get("/openapi.json")
        assert resp.status == 200
        assert resp.headers["X-Request-Id"]
        spec = await resp.json()
        assert spec["openapi"] == "3.1.0"
        assert spec["info"]["version"] == "1.0.0"
        assert spec["info"]["title"]
        validate(spec)  # raises on any schema violation
        assert "/healthz" in spec["paths"]


async def test_hub_openapi_lists_every_route_with_its_request_schema(hub):
    from web.hub.api import build_api

    api = build_api()

    spec = await (await hub.get("/openapi.json")).json()
    for op in api.operations:
        entry = spec["paths"][op.path][op.method.lower()]
        assert str(op.status) in entry["responses"]
        assert "400" in entry["responses"]
        if op.auth:
            assert entry["security"] == [{op.auth: op.access.requirement()}]
            assert "401" in entry["responses"]
            assert op.auth in spec["components"]["securitySchemes"]
        if op.body is not None:
            ref = entry["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            assert ref == f"#/components/schemas/{op.body.__name__}"
            schema = spec["components"]["schemas"][op.body.__name__]
            assert set(schema["properties"]) == set(op.body.model_fields)
    schemas = spec["components"]["schemas"]
    register = schemas["RegisterBody"]
    assert register["required"] == ["agentName"]
    assert set(register["properties"]) == {"agentName", "model", "framework", "description"}
    topic = schemas["TopicCreateBody"]
    assert set(topic["required"]) == {"title", "content", "tier"}
    assert set(topic["properties"]) >= {
        "title",
        "content",
        "tier",
        "dependsOn",
        "assumptions",
        "canonicalClaim",
        "jurisdiction",
        "authority",
        "sourceRef",
        "effectiveDate",
        "expiryDate",
    }
    tier = topic["properties"]["tier"]  # the vocabulary is one schema of its own (a StrEnum), referenced
    assert tier == {"$ref": "#/components/schemas/Tier"}
    assert schemas["Tier"]["enum"] == ["empirical", "institutional", "derived", "contested"]
    assert topic["properties"]["effectiveDate"]["anyOf"][0]["format"] == "date"
    audit = spec["paths"]["/api/audit/me"]["get"]
    params = {p["name"]: p for p in audit["parameters"]}
    assert params["limit"]["schema"]["minimum"] == 1
    assert params["limit"]["schema"]["maximum"] == 500
    assert params["limit"]["schema"]["default"] == 50
    assert "cursor" in params
    topics = {p["name"] for p in spec["paths"]["/api/pact/topics"]["get"]["parameters"]}
    assert topics == {"tier", "status", "jurisdiction", "limit", "offset"}
    events = {p["name"] for p in spec["paths"]["/api/pact/{topicId}/events"]["get"]["parameters"]}
    assert events == {"topicId", "after", "limit"}
    assert schemas["HubError"]["required"] == ["error", "detail"]
    ops = {(m, p) for p, item in spec["paths"].items() for m in item}
    assert {
        ("get", "/api/hub/stats"),
        ("get", "/api/hub/graph"),
        ("get", "/api/hub/agents"),
        ("get", "/api/hub/agents/{agentId}"),
        ("get", "/api/pact/register"),
        ("post", "/api/pact/register"),
        ("get", "/api/pact/topics"),
        ("post", "/api/pact/topics"),
        ("get", "/api/pact/{topicId}/content"),
        ("get", "/api/pact/{topicId}/sections"),
        ("get", "/api/pact/{topicId}/agents"),
        ("get", "/api/pact/{topicId}/events"),
        ("post", "/api/pact/{topicId}/join"),
        ("get", "/api/audit/me"),
    } <= ops
    op_ids = [o["operationId"] for item in spec["paths"].values() for o in item.values()]
    assert len(op_ids) == len(set(op_ids))


async def test_docs_openapi_uses_problem_details(docs):
    spec = await (await docs.get("/openapi.json")).json()
    assert set(spec["components"]["schemas"]["Problem"]["required"]) == {"type", "title", "status", "detail"}


# --- no input produces a 500 ------------------------------------------------------------------------

GARBAGE_BODIES: list[dict[str, Any]] = [
    {},
    {"data": b"{"},
    {"data": b"[]"},
    {"data": b"\xff\xfe\xfd"},
    {"data": b'{"a": ' * 3000},
    {"json": {"title": 1, "content": None, "tier": [], "agentName": {}, "message": 5, "sectionId": 7}},
    {"json": {"title": "\x00" * 5, "content": "\x00" * 20, "tier": "empirical", "message": "\x00"}},
    {"json": {"dependsOn": ["\x00", "x" * 37, 5], "priority": "\x00", "proposalId": "\x00"}},
    {"json": {"agentName": "z" * 10_000, "model": 1e308, "description": float("nan")}},
]
GARBAGE_QUERIES = ["\x00", "-1", "9" * 40, "true", "", "%", "🦀", "AU-NSW-SYD", "1e9"]


@pytest.mark.slow
async def test_no_input_produces_a_500(hub, register, settings, monkeypatch):
    monkeypatch.setattr(settings, "rate_limit_register", 100_000)
    from web.hub.api import build_api

    api = build_api()

    agent = await register()
    topic = await create_topic(hub, agent)
    ids = [topic["id"], str(uuid.uuid4()), "%00", "x" * 300, "%25", "..", "sec:_root"]
    failures = []
    sent = 0
    for op in api.operations:
        names = re.findall(r"{(\w+)}", op.path)
        paths = [op.path] if not names else [re.sub(r"{\w+}", i, op.path) for i in ids]
        queries: list[dict[str, str]] = [{}]
        if op.query is not None:
            queries += [{name: value for name in op.query.model_fields} for value in GARBAGE_QUERIES]
        bodies = GARBAGE_BODIES if op.method in ("POST", "PUT", "PATCH") else [{}]
        for path in paths:
            for params in queries:
                for body in bodies:
                    no_headers: dict[str, str] = {}
                    for headers in (agent["headers"], no_headers):
                        kwargs = dict(body)
                        if "data" in kwargs:
                            headers = {**headers, "Content-Type": "application/json"}
                        resp = await hub.request(op.method, path, params=params, headers=headers, **kwargs)
                        sent += 1
                        if resp.status >= 500:
                            failures.append((op.method, path, params, body, resp.status, await resp.text()))
                        else:
                            assert resp.headers["X-Request-Id"]
                            if resp.status >= 400:
                                err = await resp.json()
                                assert set(err) >= {"error", "detail"}
    assert failures == []
    assert sent > 500


@pytest.mark.parametrize(
    "raw",
    [
        "/api/pact/topics?limit=%ff",
        "/api/pact/topics?jurisdiction=%ff%fe",
        "/api/pact/topics?tier=%00&status=%00",
        "/api/pact/%ff/content",
        "/api/pact/%ff%00/events?after=%ff",
        "/api/pact/%2e%2e/sections",
        "/api/hub/agents/%c3%28",
        "/api/audit/me?cursor=%ff",
        "/api/audit/me?limit=%00",
    ],
)
async def test_undecodable_urls_are_4xx(hub, register, raw):
    from yarl import URL

    agent = await register()
    resp = await hub.get(URL(raw, encoded=True), headers=agent["headers"])
    assert 400 <= resp.status < 500, await resp.text()
    assert set(await resp.json()) >= {"error", "detail"}


# --- responses match the documented schemas ---------------------------------------------------------
# The suite's clients check every response against the operation's declared model (tests/response_check.py);
# this test makes sure each documented read of the hub is called at least once, variants included.


async def test_responses_match_the_openapi_document(hub, register):
    from web.hub.api import build_api

    api = build_api()
    checked = hub.checker.checked
    resp = await hub.post("/api/pact/register", json={"agentName": "Documented"})
    agent = await resp.json()
    agent["headers"] = {"Authorization": f"Bearer {agent['apiKey']}"}
    other = await register()
    base = await create_topic(hub, other, content="Intro\n\n# A\n\ntext\n\n## B\n\nmore")
    resp = await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={
            "title": "Documented topic",
            "content": "# A\n\nBody text",
            "tier": "derived",
            "dependsOn": [base["id"]],
        },
    )
    topic = await resp.json()
    resp = await hub.post(f"/api/pact/{base['id']}/join", headers=agent["headers"])
    assert resp.status == 200
    await hub.post(f"/api/pact/{base['id']}/escalate", headers=agent["headers"], json={"message": "why?"})

    values = {"topicId": base["id"], "agentId": agent["agentId"]}
    called = 0
    for op in api.operations:
        if op.method != "GET" or op.response is None or op.auth not in (None, "agentBearer"):
            continue
        if op.query is not None and op.query.model_json_schema().get("required"):
            continue  # needs area-specific input; that area's tests call it
        if op.path in ("/api/axiom/resolve", "/api/market/quote-rates"):
            continue  # optional in the model so that its absence gets the spec's own 400
        if set(re.findall(r"{(\w+)}", op.path)) - set(values):
            continue  # a proposal, station, cart …: that area's tests call it
        path = re.sub(r"{(\w+)}", lambda m: values[m.group(1)], op.path)
        variants: list[dict[str, str]] = [{}]
        if op.path.endswith("/content"):
            variants.append({"resolve": "true"})
            path = path.replace(base["id"], topic["id"])
        if op.path.endswith("/invites"):  # only a topic's creator lists its invites: the agent created topic
            path = path.replace(base["id"], topic["id"])
        for params in variants:
            resp = await hub.get(path, params=params, headers=agent["headers"])
            assert resp.status == op.status, (path, await resp.text())
            called += 1
    assert called >= 20
    assert hub.checker.checked - checked >= called + 4
