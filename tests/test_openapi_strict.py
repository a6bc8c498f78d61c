"""Each OpenAPI document is as strict as its validators (issue 29): a vocabulary is exact (no trimming, no
case folding, no aliases) and its 400 names the field and lists the allowed values; and for requests the
fuzzing found where the document and the wire disagreed, both now give the same verdict: the document
admits what the operation accepts and refuses what it refuses (tests/openapi_verdict.py judges the
document; the request is then sent)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest

from domain.market.fuel import AustralianState, FuelType
from tests.openapi_verdict import errors

FUEL_TYPES = [t.value for t in FuelType]
STATES = [s.value for s in AustralianState]


@pytest.mark.parametrize(
    ("path", "query", "field", "allowed"),
    [
        ("/api/market/fuel/cheapest", {"fuelType": " \tlpG\t"}, "fuelType", FUEL_TYPES),
        ("/api/market/fuel/cheapest", {"fuelType": "lpg"}, "fuelType", FUEL_TYPES),
        ("/api/market/fuel/cheapest", {"fuelType": "ulp"}, "fuelType", FUEL_TYPES),
        ("/api/market/fuel/cheapest", {"fuelType": "U91", "state": "\nWA"}, "state", STATES),
        (
            "/api/market/fuel/near-me",
            {"latitude": "-33", "longitude": "151", "fuelType": ""},
            "fuelType",
            FUEL_TYPES,
        ),
        ("/api/market/fuel/search", {"fuelType": "diesel"}, "fuelType", FUEL_TYPES),
        ("/api/market/fuel/search", {"state": "wa"}, "state", STATES),
        ("/api/market/fuel/summary", {"state": "     "}, "state", STATES),
        ("/api/market/fuel/history", {"stationId": "x", "fuelType": "Diesel "}, "fuelType", FUEL_TYPES),
    ],
)
async def test_fuel_vocabularies_are_exact(
    hub: Any, path: str, query: dict[str, str], field: str, allowed: list[str]
) -> None:
    spec = await (await hub.get("/openapi.json")).json()
    assert errors(spec, "GET", path, query=query), "the document must refuse it"
    resp = await hub.get(f"{path}?{urlencode(query)}")
    assert resp.status == 400, await resp.text()
    body = await resp.json()
    assert body["field"] == field, body
    assert all(value in body["detail"] for value in allowed), body


async def test_fuel_vocabularies_are_enums_in_the_document(hub: Any) -> None:
    spec = await (await hub.get("/openapi.json")).json()
    schemas = spec["components"]["schemas"]
    assert schemas["FuelType"]["enum"] == FUEL_TYPES
    assert schemas["AustralianState"]["enum"] == STATES
    for param in spec["paths"]["/api/market/fuel/cheapest"]["get"]["parameters"]:
        if param["name"] == "fuelType":
            assert param["schema"] == {"$ref": "#/components/schemas/FuelType", "default": "U91"}
        if param["name"] == "state":
            assert {"$ref": "#/components/schemas/AustralianState"} in param["schema"]["anyOf"]
    for query in ({"fuelType": "PremDSL"}, {"fuelType": "AdBlue", "state": "ACT"}):
        assert not errors(spec, "GET", "/api/market/fuel/cheapest", query=query)
        resp = await hub.get(f"/api/market/fuel/cheapest?{urlencode(query)}")
        assert resp.status == 200, await resp.text()
        assert (await resp.json())["fuelType"] == query["fuelType"]


# ---- the document and the wire agree -------------------------------------------------------------------
# Requests the fuzzing found (schemathesis, issue 29) where one admitted what the other refused, with their
# neighbours on the right side of the rule. `True`: both admit it (any answer but 400: an unknown id is a
# 404 after validation); `False`: both refuse it, the 400 naming the field.

TOPIC = "/api/pact/00000000-0000-4000-8000-000000000001"
DOC = "/api/tap/00000000-0000-4000-8000-000000000002"
SHARE = "/api/documents/00000000-0000-4000-8000-000000000003/share-link"
PROPOSAL = {"sectionId": "sec:a", "newContent": "New text.", "summary": "Why"}
Probe = tuple[str, str, str, str, dict[str, str] | None, Any, bool, str | None]

PROBES: list[Probe] = [
    # app, key, method, path, query, body, admitted, the field a refusal names
    ("hub", "", "GET", "/api/market/fuel/history", {"stationId": " "}, None, False, "stationId"),
    ("hub", "", "GET", "/api/market/fuel/history", {"stationId": " x"}, None, True, None),
    ("hub", "", "POST", "/api/pact/register", None, {"agentName": "{\u00a7\x9c"}, False, "agentName"),
    ("hub", "", "POST", "/api/pact/register", None, {"agentName": "\t"}, False, "agentName"),
    ("hub", "", "POST", "/api/axiom/keys", None, {"ownerName": "\x9c\U000e0041"}, False, "ownerName"),
    ("hub", "", "POST", "/api/axiom/keys", None, {"ownerName": "\u00d6\x01"}, True, None),
    (
        "hub",
        "agent",
        "POST",
        f"{TOPIC}/constraints",
        None,
        {"sectionId": " ", "boundary": "b"},
        False,
        "sectionId",
    ),
    (
        "hub",
        "agent",
        "POST",
        f"{TOPIC}/constraints",
        None,
        {"sectionId": "sec:a", "boundary": "\x85"},
        False,
        "boundary",
    ),
    (
        "hub",
        "agent",
        "POST",
        f"{TOPIC}/constraints",
        None,
        {"sectionId": "sec:a ", "boundary": " b"},
        True,
        None,
    ),
    (
        "hub",
        "agent",
        "POST",
        "/api/pact/topics",
        None,
        {"title": "  ab ", "content": "0123456789", "tier": "derived"},
        False,
        "title",
    ),
    (
        "hub",
        "agent",
        "POST",
        "/api/pact/topics",
        None,
        {"title": "a b", "content": " 012345678 ", "tier": "derived"},
        False,
        "content",
    ),
    (
        "hub",
        "staff",
        "POST",
        "/api/review/proposals/x/decide",
        None,
        {"decision": "reject", "note": "\r"},
        False,
        "note",
    ),
    # White space is what Python's str.strip() takes (U+001E and U+0085 too), spelt out for every engine;
    # `$` ends the string; a letter is one of any script.
    (
        "hub",
        "agent",
        "POST",
        f"{TOPIC}/proposals",
        None,
        {**PROPOSAL, "citations": ["\x1e"]},
        False,
        "citations.0",
    ),
    ("hub", "agent", "POST", f"{TOPIC}/proposals", None, {**PROPOSAL, "citations": ["\ufeff"]}, True, None),
    (
        "hub",
        "commercial",
        "GET",
        "/api/axiom/legislation",
        {"jurisdiction": "AU\n"},
        None,
        False,
        "jurisdiction",
    ),
    ("hub", "", "POST", "/api/pact/register", None, {"agentName": "\u7530\u4e2d"}, True, None),
    ("hub", "", "POST", "/api/pact/register", None, {"agentName": "\u2167"}, True, None),
    ("hub", "commercial", "GET", "/api/axiom/legislation", {"include": "\x8b#l7u"}, None, False, "include"),
    (
        "hub",
        "commercial",
        "GET",
        "/api/axiom/legislation",
        {"include": "sections, amendments"},
        None,
        False,
        "include",
    ),
    (
        "hub",
        "commercial",
        "GET",
        "/api/axiom/legislation",
        {"include": "amendments,sections"},
        None,
        True,
        None,
    ),
    (
        "hub",
        "commercial",
        "GET",
        "/api/axiom/legislation/nope",
        {"include": "amendments,"},
        None,
        False,
        "include",
    ),
    (
        "hub",
        "commercial",
        "GET",
        "/api/axiom/legislation",
        {"jurisdiction": "qld"},
        None,
        False,
        "jurisdiction",
    ),
    ("hub", "commercial", "GET", "/api/axiom/legislation", {"jurisdiction": "Qld"}, None, True, None),
    ("hub", "commercial", "GET", "/api/axiom/facts", {"q": "\x15"}, None, False, "q"),
    ("hub", "commercial", "GET", "/api/axiom/facts", {"q": "-excluded"}, None, True, None),
    ("hub", "commercial", "GET", "/api/axiom/facts", {"q": " "}, None, True, None),
    ("hub", "commercial", "GET", "/api/axiom/facts", {"tier": "Derived"}, None, False, "tier"),
    ("hub", "", "GET", "/api/axiom/resolve", {"citation": "0" * 501}, None, False, "citation"),
    ("hub", "", "GET", "/api/axiom/resolve", {"citation": "0" * 500}, None, True, None),
    ("docs", "service", "POST", "/api/auth/refresh", None, {"refreshToken": " "}, False, "refreshToken"),
    ("docs", "service", "POST", "/api/comments", None, {"documentId": "x", "text": " \n"}, False, "text"),
    (
        "docs",
        "service",
        "POST",
        f"{DOC}/constraints",
        None,
        {"sectionId": "s", "boundary": "\x85"},
        False,
        "boundary",
    ),
    ("docs", "service", "POST", f"{DOC}/proposals/x/reject", None, {"reason": "\u3000"}, False, "reason"),
    ("docs", "service", "POST", f"{DOC}/proposals/x/reject", None, {"reason": "no"}, True, None),
    # share links: each access mode's needs, the address and domain forms
    (
        "docs",
        "service",
        "POST",
        f"{SHARE}",
        None,
        {"accessMode": "closed-org", "permission": "FullReview"},
        False,
        "allowedDomain",
    ),
    (
        "docs",
        "service",
        "POST",
        f"{SHARE}",
        None,
        {"accessMode": "closed-org", "allowedDomain": "000000"},
        False,
        "allowedDomain",
    ),
    (
        "docs",
        "service",
        "POST",
        f"{SHARE}",
        None,
        {"accessMode": "closed-org", "allowedDomain": "Example.COM"},
        True,
        None,
    ),
    (
        "docs",
        "service",
        "POST",
        f"{SHARE}",
        None,
        {"accessMode": "closed-individual"},
        False,
        "reviewerEmails",
    ),
    (
        "docs",
        "service",
        "POST",
        f"{SHARE}",
        None,
        {"accessMode": "closed-individual", "reviewerEmails": ["ada"]},
        False,
        "reviewerEmails.0",
    ),
    (
        "docs",
        "service",
        "POST",
        f"{SHARE}",
        None,
        {"accessMode": "closed-individual", "reviewerEmails": ["a@b.io"]},
        True,
        None,
    ),
    ("docs", "service", "POST", f"{SHARE}", None, {"allowedDomain": "b.io"}, False, "allowedDomain"),
    (
        "docs",
        "service",
        "POST",
        f"{SHARE}",
        None,
        {"accessMode": "open", "reviewerEmails": ["a@b.io"]},
        False,
        "reviewerEmails",
    ),
    ("docs", "service", "POST", f"{SHARE}", None, {}, True, None),
    (
        "docs",
        "",
        "POST",
        "/api/share/shr_x/verification",
        None,
        {"email": "\U000b8221N\u00e1"},
        False,
        "email",
    ),
    ("docs", "", "POST", "/api/share/shr_x/verification", None, {"email": "ada@example.org"}, True, None),
    (
        "docs",
        "",
        "POST",
        "/api/share/shr_x/verification/confirm",
        None,
        {"email": "\u0089\u00c6\n", "code": "1"},
        False,
        "email",
    ),
    (
        "docs",
        "",
        "POST",
        "/api/share/shr_x/verification/confirm",
        None,
        {"email": "a@b.io", "code": "12345"},
        False,
        "code",
    ),
    (
        "docs",
        "",
        "POST",
        "/api/share/shr_x/verification/confirm",
        None,
        {"email": "a@b.io", "code": "123456"},
        True,
        None,
    ),
    # agents on a document: a poll cursor, a proposal status, a role's capabilities
    ("docs", "service", "GET", f"{DOC}/poll", {"since": "0" * 40}, None, False, "since"),
    ("docs", "service", "GET", f"{DOC}/poll", {"since": "evt_2147483648"}, None, False, "since"),
    ("docs", "service", "GET", f"{DOC}/poll", {"since": "evt_2147483647"}, None, True, None),
    ("docs", "service", "GET", f"{DOC}/poll", {"since": ""}, None, True, None),
    ("docs", "service", "GET", f"{DOC}/proposals", {"status": "Pending"}, None, False, "status"),
    ("docs", "service", "GET", f"{DOC}/proposals", {"status": "objected"}, None, True, None),
    (
        "docs",
        "service",
        "POST",
        f"{DOC}/join",
        None,
        {"agentName": "Obs", "role": "observer", "capabilities": ["vote"]},
        False,
        "capabilities",
    ),
    (
        "docs",
        "service",
        "POST",
        f"{DOC}/join",
        None,
        {"agentName": "Obs", "role": "observer", "capabilities": []},
        True,
        None,
    ),
    (
        "docs",
        "service",
        "POST",
        f"{DOC}/join",
        None,
        {"agentName": "-", "role": "editor"},
        False,
        "agentName",
    ),
]


@pytest.fixture
async def keys(hub: Any, runtime: Any, register: Any) -> dict[str, dict[str, str]]:
    from domain.documents import servicekeys
    from domain.kernel.context import SYSTEM
    from domain.people import staff

    async with runtime.db.transaction() as session:
        service = await servicekeys.create(
            session, SYSTEM, org_name="Strict Org", scopes=servicekeys.parse_scopes("all")
        )
        reviewer = await staff.create(session, name="Strict Staff", roles=("curator", "reviewer"))
    commercial = await (await hub.post("/api/axiom/keys", json={"ownerName": "Strict Research"})).json()
    return {
        "": {},
        "agent": (await register())["headers"],
        "commercial": {"Authorization": f"Bearer {commercial['apiKey']}"},
        "staff": {"Authorization": f"Bearer {reviewer['apiKey']}"},
        "service": {"X-Api-Key": service["apiKey"]},
    }


@pytest.mark.parametrize(
    ("app", "key", "method", "path", "query", "body", "admitted", "field"),
    PROBES,
    ids=[f"{p[2]} {p[3]} {p[4] or p[5]!r}"[:90] for p in PROBES],
)
async def test_the_document_and_the_wire_agree(
    hub: Any,
    docs: Any,
    keys: dict[str, dict[str, str]],
    app: str,
    key: str,
    method: str,
    path: str,
    query: dict[str, str] | None,
    body: Any,
    admitted: bool,
    field: str | None,
) -> None:
    client = hub if app == "hub" else docs
    spec = await (await client.get("/openapi.json")).json()
    template = next(p for p in spec["paths"] if _matches(p, path) and method.lower() in spec["paths"][p])
    why = errors(spec, method, template, query=query, body=body)
    assert not why if admitted else why, (why, "the document's verdict")
    resp = await client.request(
        method, path + (f"?{urlencode(query)}" if query else ""), json=body, headers=keys[key]
    )
    if admitted:
        assert resp.status != 400, await resp.text()
        assert resp.status < 500, await resp.text()
    else:
        assert resp.status == 400, await resp.text()
        assert (await resp.json())["field"] == field


def _matches(template: str, path: str) -> bool:
    parts, given = template.strip("/").split("/"), path.strip("/").split("/")
    return len(parts) == len(given) and all(
        p == g or (p.startswith("{") and p.endswith("}")) for p, g in zip(parts, given, strict=True)
    )


async def test_a_section_of_a_document_not_ready_is_a_documented_answer(docs: Any, runtime: Any) -> None:
    """Naming a section of a document still converting is 409, of one whose conversion failed 422: both
    documented on every operation that looks a section up (the stateful fuzzing escalated on one)."""
    from sqlalchemy import update

    from domain.documents.models import Document
    from tests.documents_support import make_key, upload_ready

    key = await make_key(runtime)
    doc = await upload_ready(docs, key, b"# Plan\n\nSome words.\n", "plan.md")
    base = f"/api/tap/{doc['id']}"
    joined = await docs.post(f"{base}/join", json={"agentName": "Ed"}, headers=key["headers"])
    assert joined.status == 201, await joined.text()
    spec = await (await docs.get("/openapi.json")).json()
    calls = [
        ("post", "/api/tap/{docId}/escalate", "/escalate", {"question": "Why?", "sectionId": "sec:plan"}),
        ("post", "/api/tap/{docId}/sections/{sectionId}/lock", "/sections/sec:plan/lock", {}),
    ]
    for status, answer in (("processing", 409), ("failed", 422)):
        async with runtime.db.transaction() as session:
            await session.execute(update(Document).where(Document.id == doc["id"]).values(status=status))
        for method, template, path, body in calls:
            resp = await docs.request(method, base + path, json=body, headers=key["headers"])
            assert resp.status == answer, await resp.text()
            assert str(answer) in spec["paths"][template][method]["responses"], (template, answer)
