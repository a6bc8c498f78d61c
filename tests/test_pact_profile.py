"""`/.well-known/pact.json` on both apps (PACT v2.0.3 §15.1): its fields, what they promise held against the
app's behaviour, its generation from the app's routes, and the honesty of `conformanceLevel: core` against
the Core operations of §7.1 listed here on their own."""

from __future__ import annotations

import importlib.metadata
import json
import re
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from aiohttp import web

from domain.kernel import log_roots
from domain.kernel.signing_keys import public_key_of
from domain.pact import profile as pact
from tests.consensus_helpers import open_topic
from tests.documents_support import make_key, upload_ready
from tests.pact_cli import base_url, pact_cli
from web.docs.api import build_api as build_docs_api
from web.hub.api import build_api as build_hub_api
from web.kernel.pact_profile import route_pairs
from web.kernel.routing import Routes, json_response
from web.kernel.sse import realtime_endpoint

APPS = ("hub", "docs")
ROOT = Path(__file__).resolve().parents[1]
_R = "/api/pact/{documentId}"

# PACT §7.1's endpoints that Core (§15.2: join, leave, intent, constrain, propose, object, escalate, done,
# poll, event sourcing) stands on, as the specification writes them: the unmediated protocol and PACT Live.
# Not here: the v2.0.3 session layer (§4.4) and the resolution workflow's briefing, pre-validation and cascade
# endpoints (docs/pact.md says why).
CORE_7_1 = [
    ("POST", f"{_R}/join"),
    ("DELETE", f"{_R}/leave"),
    ("GET", f"{_R}/content"),
    ("GET", f"{_R}/sections"),
    ("GET", f"{_R}/agents"),
    ("POST", f"{_R}/proposals"),
    ("GET", f"{_R}/proposals"),
    ("POST", f"{_R}/proposals/{{id}}/approve"),
    ("POST", f"{_R}/proposals/{{id}}/reject"),
    ("DELETE", f"{_R}/proposals/{{id}}"),
    ("POST", f"{_R}/sections/{{sectionId}}/lock"),
    ("DELETE", f"{_R}/sections/{{sectionId}}/lock"),
    ("POST", f"{_R}/comments"),
    ("POST", f"{_R}/escalate"),
    ("GET", f"{_R}/events"),
    ("POST", f"{_R}/intents"),
    ("GET", f"{_R}/intents"),
    ("POST", f"{_R}/intents/{{id}}/object"),
    ("POST", f"{_R}/constraints"),
    ("GET", f"{_R}/constraints"),
    ("DELETE", f"{_R}/constraints/{{id}}"),
    ("POST", f"{_R}/salience"),
    ("GET", f"{_R}/salience"),
    ("POST", f"{_R}/proposals/{{id}}/object"),
    ("GET", f"{_R}/poll"),
    ("POST", f"{_R}/ask-human"),
    ("GET", f"{_R}/human-responses"),
    ("POST", f"{_R}/human-responses/{{queryId}}/respond"),
    ("POST", f"{_R}/done"),
    ("GET", f"{_R}/completions"),
    ("POST", f"{_R}/resolve"),
]

# THE ONE LIST of Core endpoints not routed yet: empty since issue 30 landed every one on both apps (the
# test below fails for an entry that is routed, so a stale one cannot stay).
EXPECTED_MISSING: set[tuple[str, str, str]] = set()
BUILDERS = {"hub": build_hub_api, "docs": build_docs_api}
RESOURCE_TYPES = {"hub": ("fact", "pact-fact"), "docs": ("document", "pact-document")}
# PACT's resource-type registry (spec/v2.0/resource-types.yaml): its built-in types, none registered yet.
REGISTRY = {"document", "transaction", "fact", "record"}


@pytest.fixture(params=APPS)
async def served(request, hub, docs) -> tuple[str, Any]:
    """Each app in turn: its name and its client."""
    return request.param, hub if request.param == "hub" else docs


def _shape(method: str, path: str) -> tuple[str, str]:
    return method, re.sub(r"\{[^}]*\}", "{}", path)


async def _profile(client: Any) -> dict[str, Any]:
    resp = await client.get("/.well-known/pact.json")
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    assert isinstance(body, dict)
    return body


def _concrete(path: str) -> str:
    path = path.replace("{sectionId}", "sec:intro")
    return re.sub(r"\{[^}]*\}", lambda _: str(uuid.uuid4()), path)


async def _routed(client: Any, method: str, path: str) -> bool:
    """Whether the app routes `method` on `path`: anything but its "no route" 404 or a 405."""
    resp = await client.request(method, _concrete(path))
    text = await resp.text()
    return resp.status != 405 and not (resp.status == 404 and "no route for" in text)


async def test_the_profile_states_what_concord_is_anonymously_and_cacheably(served):
    app, client = served
    resp = await client.get("/.well-known/pact.json", headers={"X-Api-Key": "svc_sk_not_a_key"})
    assert resp.status == 200  # anonymous: a key, even a wrong one, changes nothing
    assert resp.headers["Cache-Control"] == "public, max-age=300"
    assert resp.content_type == "application/json"
    body = await resp.json()
    assert body == await _profile(client)
    assert (body["name"], body["version"], body["specVersion"], body["conformanceLevel"]) == (
        "Concord",
        importlib.metadata.version("concord"),
        "2.0.3",
        "core",
    )
    [resource] = body["resourceTypes"]
    assert (resource["type"], resource["entityType"]) == RESOURCE_TYPES[app]
    assert resource["type"] in REGISTRY  # §15.1: resource types intersect the registry
    assert (resource["contentFormat"], resource["terminalStates"]) == ("text/markdown", ["Merged"])
    assert resource["fieldSchema"].startswith("sec:{slug}")
    assert "objection-based" in resource["approvalPolicies"]  # §15.2 Core: silence-based auto-apply
    assert resource["defaultApprovalPolicy"] == "concord-default"
    assert body["retentionPolicy"] == {"minimumDays": 365, "indefinite": True, "tombstoneAfter": None}
    flags = body["capabilities"]
    assert list(flags) == [flag.value for flag in pact.Capability]  # every flag, true or false
    assert flags["hashChainedEvents"] is flags["signedLogRoots"] is flags["realtimeEvents"] is True
    for absent in ("mediatedCommunication", "informationBarriers", "authorizationProof", "sessions"):
        assert flags[absent] is False

    spec = await (await client.get("/openapi.json")).json()
    entry = spec["paths"]["/.well-known/pact.json"]["get"]
    assert "security" not in entry
    assert entry["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/PactProfile"
    }


async def test_the_endpoints_are_where_the_app_answers_and_the_log_key_signs_its_roots(
    served, runtime, register, settings, monkeypatch
):
    app, client = served
    if app == "hub":
        topic_id, _agents = await open_topic(client, register)
        stream, resource, headers = f"topic:{topic_id}", topic_id, {}
    else:
        key = await make_key(runtime)
        resource = (await upload_ready(client, key, b"# Intro\n\nHello.\n", "a.md"))["id"]
        stream, headers = f"document:{resource}", key["headers"]

    body = await _profile(client)
    base = base_url(client)
    assert body["endpoints"]["rest"] == f"{base}/api/pact"
    assert body["endpoints"]["realtime"] == realtime_endpoint(base)
    # The REST base and the stream template lead to the resource.
    resp = await client.get(f"/api/pact/{resource}/sections", headers=headers)
    assert resp.status == 200, await resp.text()
    stream_path = body["endpoints"]["realtime"].removeprefix(base).replace("{id}", resource)
    async with client.get(stream_path, headers=headers) as resp:
        assert (resp.status, resp.content_type) == (200, "text/event-stream")

    signing_key = body["endpoints"]["logSigningKey"]
    assert signing_key == log_roots.signing_key_id()
    public_key_of(signing_key)  # a did:key naming an Ed25519 key
    async with runtime.db.transaction() as session:
        root = await log_roots.sign_now(session, stream)
    assert root is not None
    assert root.data["signing_key"] == signing_key
    assert log_roots.check_signature(root.data) is None

    monkeypatch.setattr(settings, "public_url", "https://pact.example/")
    endpoints = (await _profile(client))["endpoints"]
    assert endpoints["rest"] == "https://pact.example/api/pact"
    assert endpoints["realtime"] == "https://pact.example/api/pact/{id}/events/stream"


async def test_the_proposal_payload_is_what_a_proposal_takes(served, runtime, register):
    app, client = served
    [resource] = (await _profile(client))["resourceTypes"]
    shape = resource["proposalPayload"]
    assert re.fullmatch(r"\{ \w+\??(, \w+\??)* \}", shape), shape
    fields = shape.strip("{} ").split(", ")
    required = [f for f in fields if not f.endswith("?")]
    assert required[0] == "sectionId"
    values = {"sectionId": "sec:answer", "newContent": "New text.", "content": "New text.", "summary": "Why"}
    if app == "hub":
        topic_id, agents = await open_topic(client, register)
        path, headers = f"/api/pact/{topic_id}/proposals", agents[1]["headers"]
    else:
        key = await make_key(runtime)
        doc = await upload_ready(client, key, b"# Answer\n\nOld text.\n", "a.md")
        path, headers = f"/api/pact/{doc['id']}/proposals", key["headers"]
        resp = await client.post(f"/api/pact/{doc['id']}/join", headers=headers, json={"agentName": "ada"})
        assert resp.status == 201, await resp.text()
    for missing in required:
        partial = {name: values[name] for name in required if name != missing}
        resp = await client.post(path, headers=headers, json=partial)
        assert resp.status == 400, f"{missing} is advertised as required: {await resp.text()}"
    resp = await client.post(path, headers=headers, json={name: values[name] for name in required})
    assert resp.status == 201, await resp.text()


async def test_every_operation_listed_is_routed_and_none_routed_is_left_out(served):
    _app, client = served
    body = await _profile(client)
    listed = {(op["method"], op["path"]) for op in body["operations"]}
    assert len(listed) == len(body["operations"])
    for op in body["operations"]:
        assert await _routed(client, op["method"], op["path"]), op
    listed_names = {op["operation"] for op in body["operations"]}
    for spec in pact.CATALOGUE:
        if spec.operation.value not in listed_names:
            assert not await _routed(client, spec.method, spec.path), f"{spec} is routed but not listed"


async def _fake(request: web.Request) -> web.Response:
    return json_response({})


@pytest.mark.parametrize("app", APPS)
async def test_a_route_added_later_shows_in_the_profile_without_editing_it(
    app, aiohttp_client, runtime, monkeypatch
):
    """What a later part adds (cascade validation, structured negotiation, the tier probe) is listed, and
    the capability flags it stands for turn true, from the route table alone."""
    import web.app
    import web.docs.api
    import web.hub.api

    extra = Routes()
    placeholder = "{topicId}" if app == "hub" else "{docId}"
    added = [
        ("POST", f"/api/pact/{placeholder}/cascade-validate"),
        ("GET", f"/api/pact/{placeholder}/negotiations"),
        ("POST", f"/api/pact/{placeholder}/negotiations/{{id}}/position"),
        ("GET", f"/api/pact/{placeholder}/negotiations/{{id}}/synthesis"),
        ("POST", "/api/pact/_probe/tier"),
    ]
    for method, path in added:
        extra.route(method, path, summary="added later", tags=["Test"])(_fake)
    module = web.hub.api if app == "hub" else web.docs.api
    monkeypatch.setattr(module, "ROUTE_MODULES", (*module.ROUTE_MODULES, SimpleNamespace(routes=extra)))
    build = web.app.create_hub_app if app == "hub" else web.app.create_docs_app
    client = await aiohttp_client(build(runtime))
    body = await _profile(client)
    listed = {(op["method"], op["path"]): op["operation"] for op in body["operations"]}
    assert listed[added[0]] == "cascade.validate"
    assert listed[added[1]] == "negotiations.list"
    assert listed[added[4]] == "tier.introspect"
    flags = body["capabilities"]
    assert flags["structuredNegotiation"] is flags["tierIntrospection"] is True
    assert flags["mediatedCommunication"] is False
    # In the catalogue's order: the unmediated operations before the mediated ones.
    names = [op["operation"] for op in body["operations"]]
    assert names.index("proposal.withdraw") < names.index("negotiations.list")


async def test_conformance_core_is_honest(served):
    """Where the profile says core, every Core endpoint of §7.1 is routed on the app, save the ones the ONE
    list above names; and each one that list names is indeed not routed yet."""
    app, client = served
    body = await _profile(client)
    assert body["conformanceLevel"] == "core"
    routed = {_shape(m, p) for m, p in route_pairs(BUILDERS[app]())}
    missing = [(m, p) for m, p in CORE_7_1 if _shape(m, p) not in routed]
    expected = sorted((m, p) for a, m, p in EXPECTED_MISSING if a == app)
    assert sorted(missing) == expected, (
        f"Core endpoints not routed on the {app} app: {sorted(missing)}; "
        f"EXPECTED_MISSING lists {expected} (remove the entries that have landed)"
    )
    for method, path in missing:
        assert not await _routed(client, method, path)
    # The profile marks exactly these as core, and lists those routed.
    assert {spec.shape for spec in pact.CORE} == {_shape(m, p) for m, p in CORE_7_1}
    core_listed = {_shape(op["method"], op["path"]) for op in body["operations"] if op["core"]}
    assert core_listed == {_shape(m, p) for m, p in CORE_7_1} - {_shape(m, p) for m, p in missing}


def test_retention_is_truthful_no_code_deletes_an_event():
    """retentionPolicy says indefinite: no code path of the application deletes an event or a stream's
    counter (the migrations' downgrades aside, which drop whole tables)."""
    deleting = re.compile(
        r"delete\(\s*(Event|EventStream)\b|(Event|EventStream)\.__table__\.delete|"
        r"DELETE\s+FROM\s+(events|event_streams)\b|truncate\s+(table\s+)?(events|event_streams)\b",
        re.IGNORECASE,
    )
    sources = [ROOT / "concord_cli.py"]
    for package in ("domain", "infra", "runtime", "web", "workers", "scheduler"):
        sources += sorted((ROOT / package).rglob("*.py"))
    found = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in sources
        for match in deleting.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []
    assert pact.RETENTION == pact.RetentionPolicy(minimum_days=365, indefinite=True, tombstone_after=None)


async def test_the_pact_cli_reads_the_profile_and_finds_it_core(served, tmp_path):
    cli = pact_cli(tmp_path)
    _app, client = served
    base = base_url(client)
    shown = await cli.ok(base, None, "profile", base, "--json")
    assert json.loads(shown.out) == await _profile(client)
    checked = await cli.ok(base, None, "profile", base, "--check", "core")
    assert checked.lines()[-1] == "✓ meets minimum conformance level 'core'"


def test_docs_pact_md_covers_every_operation_and_capability():
    """docs/pact.md's tables name every operation of the catalogue and every capability flag."""
    text = (ROOT / "docs" / "pact.md").read_text(encoding="utf-8")
    assert [op.value for op in pact.PactOperation if f"`{op.value}`" not in text] == []
    assert [flag.value for flag in pact.Capability if f"`{flag.value}`" not in text] == []
