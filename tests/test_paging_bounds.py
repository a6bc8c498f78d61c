"""Every list endpoint's paging and cursor parameters: out-of-range, huge and malformed values are a 400
naming the field, never a 500 (PostgreSQL's INTEGER and BIGINT and SQLite's 64-bit integers overflow on
numbers a client may well send), and the largest accepted value still answers 200."""

from __future__ import annotations

from typing import Any

import pytest

from tests.axiom_helpers import axiom_key, staff_headers
from tests.documents_support import make_key, upload
from tests.test_mcp import connect, text_of

HUGE = ["2147483648", "9223372036854775808", "9999999999999999999", "1" + "0" * 40, "-1", "1e3", "0x10", "½"]

TOPIC = {
    "title": "Paging bounds",
    "tier": "empirical",
    "content": "# Answer\n\nYes.\n",
}


@pytest.fixture
async def hub_targets(hub: Any, register: Any, runtime: Any) -> list[tuple[str, dict[str, str], list[str]]]:
    agent = await register()
    resp = await hub.post("/api/pact/topics", json=TOPIC, headers=agent["headers"])
    assert resp.status == 201, await resp.text()
    topic = (await resp.json())["id"]
    commercial = (await axiom_key(hub))["headers"]
    staff = await staff_headers(runtime)
    a = agent["headers"]
    return [
        ("/api/hub/agents", {}, ["limit", "offset"]),
        ("/api/pact/topics", {}, ["limit", "offset"]),
        (f"/api/pact/{topic}/events", {}, ["after", "limit"]),
        (f"/api/pact/{topic}/proposals", {}, ["limit", "offset"]),
        ("/api/pact/wallet", a, ["limit", "offset"]),
        ("/api/audit/me", a, ["limit"]),
        ("/api/work/events", a, ["after", "limit"]),
        ("/api/work/defects", staff, ["limit"]),
        ("/api/review/escalations", staff, ["limit", "offset"]),
        ("/api/review/proposals", staff, ["limit", "offset"]),
        ("/api/review/work", staff, ["limit", "offset"]),
        ("/api/axiom/facts", commercial, ["limit", "offset"]),
        ("/api/axiom/legislation", commercial, ["limit", "offset"]),
        ("/api/axiom/legislation/search?q=work", commercial, ["limit", "offset"]),
        ("/api/market/products/search?query=paint", {}, ["limit"]),
        ("/api/market/fuel/cheapest", {}, ["limit"]),
        ("/api/market/fuel/search", {}, ["limit"]),
        ("/api/market/fuel/near-me?latitude=-33.8&longitude=151.2", {}, ["limit"]),
    ]


FAILS: list = []


async def _probe(client: Any, path: str, headers: dict[str, str], field: str, value: str) -> None:
    sep = "&" if "?" in path else "?"
    resp = await client.get(f"{path}{sep}{field}={value}", headers=headers)
    text = await resp.text()
    if resp.status != 400 or field not in text:
        FAILS.append((path, field, value, resp.status, text[:150]))


async def test_hub_list_parameters_refuse_huge_and_malformed_numbers(hub: Any, hub_targets: Any) -> None:
    for path, headers, fields in hub_targets:
        for field in fields:
            for value in HUGE:
                await _probe(hub, path, headers, field, value)
    for f in FAILS:
        print(f)
    assert not FAILS


async def test_document_list_parameters_refuse_huge_and_malformed_numbers(docs: Any, runtime: Any) -> None:
    key = await make_key(runtime)
    resp = await upload(docs, key, b"# Doc\n\nText.\n", "doc.md")
    assert resp.status == 202
    doc = (await resp.json())["id"]
    targets = [
        ("/api/documents", ["page", "pageSize"]),
        ("/api/comments/search", ["page", "pageSize"]),
        (f"/api/tap/{doc}/events", ["after", "limit"]),
        (f"/api/pact/{doc}/events", ["after", "limit"]),
        (f"/api/tap/{doc}/poll", ["limit"]),
    ]
    for path, fields in targets:
        for field in fields:
            for value in HUGE:
                await _probe(docs, path, key["headers"], field, value)
    for since in [
        "evt_2147483648",
        "evt_9999999999999999999",
        "evt_" + "9" * 40,
        "evt_-1",
        "evt_²",
        "evt_1e3",
    ]:
        await _probe(docs, f"/api/tap/{doc}/poll", key["headers"], "since", since)
    for f in FAILS:
        print(f)
    assert not FAILS


async def test_mcp_list_and_poll_refuse_huge_numbers(docs: Any, runtime: Any) -> None:
    key = await make_key(runtime)
    resp = await upload(docs, key, b"# Doc\n\nText.\n", "doc.md")
    doc = (await resp.json())["id"]
    async with connect(docs, key) as session:
        for name, arguments, field in [
            ("pact_list_documents", {"page": 10**20}, "page"),
            ("pact_list_documents", {"page": 2**31}, "page"),
            ("pact_poll", {"documentId": doc, "since": "evt_9999999999999999999"}, "since"),
            ("pact_poll", {"documentId": doc, "since": "evt_2147483648"}, "since"),
        ]:
            result = await session.call_tool(name, arguments)
            assert result.is_error, (name, arguments)
            text = text_of(result)
            assert field in text, (name, arguments, text)
            assert "internal" not in text.casefold(), (name, arguments, text)
