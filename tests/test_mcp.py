"""The MCP server of the document API, driven by the official `mcp` SDK client over streamable HTTP, plus
raw HTTP for the transport's edge cases."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from mcp.types import CallToolResult, TextContent

from tests import built_documents
from tests.documents_support import make_key

INIT: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@asynccontextmanager
async def connect(docs: Any, key: dict[str, Any]) -> AsyncIterator[ClientSession]:
    url = str(docs.make_url("/mcp"))
    async with streamablehttp_client(url, headers=key["headers"]) as (read, write, _session_id):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def text_of(result: CallToolResult) -> str:
    return next((c.text for c in result.content if isinstance(c, TextContent)), "")


async def call(session: ClientSession, name: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(name, arguments)
    assert not result.isError, text_of(result)
    return result.structuredContent or json.loads(text_of(result))


async def wait_ready(session: ClientSession, doc_id: str) -> dict[str, Any]:
    for _ in range(300):
        doc = await call(session, "pact_get_document", documentId=doc_id)
        if doc["status"] != "processing":
            assert doc["status"] == "ready", doc
            return doc
        await asyncio.sleep(0.1)
    raise AssertionError("document never became ready")


async def test_initialize_and_list_tools(docs: Any, runtime: Any):
    key = await make_key(runtime)
    async with connect(docs, key) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        await session.send_ping()
    for name in (
        "pact_upload_document",
        "pact_join",
        "pact_sections",
        "pact_lock",
        "pact_escalate",
        "pact_poll",
    ):
        assert name in tools
        assert tools[name].description
        assert tools[name].inputSchema["type"] == "object"
    assert "documentId" in tools["pact_join"].inputSchema["required"]
    assert "agentName" in tools["pact_join"].inputSchema["properties"]


async def test_two_agents_collaborate_through_tools_only(docs: Any, runtime: Any):
    alice, bob = await make_key(runtime, name="alice"), await make_key(runtime, name="bob")
    data = built_documents.docx_bytes()
    async with connect(docs, alice) as a, connect(docs, bob) as b:
        doc = await call(
            a,
            "pact_upload_document",
            filename="budget.docx",
            contentBase64=base64.b64encode(data).decode(),
            tags=["mcp"],
        )
        doc_id = doc["id"]
        await wait_ready(a, doc_id)
        listed = await call(b, "pact_list_documents", tag="mcp")
        assert [d["id"] for d in listed["data"]] == [doc_id]
        await call(a, "pact_join", documentId=doc_id, agentName="Alice", role="editor")
        await call(b, "pact_join", documentId=doc_id, agentName="Bob", role="reviewer")
        tree = (await call(a, "pact_sections", documentId=doc_id))["sections"]
        section = tree[0]["sectionId"]
        assert section.startswith("sec:")
        content = (await call(b, "pact_get", documentId=doc_id))["content"]
        assert "# " in content
        await call(a, "pact_intent_declare", documentId=doc_id, sectionId=section, goal="Tighten wording")
        assert len((await call(b, "pact_intents", documentId=doc_id))["intents"]) == 1
        await call(
            b, "pact_constraint_publish", documentId=doc_id, sectionId=section, boundary="Keep the title"
        )
        await call(b, "pact_salience_set", documentId=doc_id, sectionId=section, score=9)
        salience = await call(a, "pact_salience_map", documentId=doc_id)
        assert any(s["average"] == 9 for s in salience["salience"])
        locked = await call(a, "pact_lock", documentId=doc_id, sectionId=section, ttlSeconds=60)
        assert locked["sectionId"] == section
        refused = await b.call_tool("pact_lock", {"documentId": doc_id, "sectionId": section})
        assert refused.isError
        assert json.loads(text_of(refused))["status"] == 409
        await call(a, "pact_unlock", documentId=doc_id, sectionId=section)
        proposal = await call(
            a,
            "pact_propose",
            documentId=doc_id,
            sectionId=section,
            content="Rewritten by Alice.",
            summary="Tighten the wording",
        )
        pending = await call(b, "pact_proposals", documentId=doc_id, status="pending")
        assert [p["proposalId"] for p in pending["proposals"]] == [proposal["proposalId"]]
        own = await a.call_tool("pact_approve", {"documentId": doc_id, "proposalId": proposal["proposalId"]})
        assert own.isError  # an author never votes on its own proposal
        approved = await call(b, "pact_approve", documentId=doc_id, proposalId=proposal["proposalId"])
        assert approved["status"] == "approved"
        assert "Rewritten by Alice." in (await call(a, "pact_get", documentId=doc_id))["content"]
        rejected = await b.call_tool(
            "pact_reject", {"documentId": doc_id, "proposalId": proposal["proposalId"]}
        )
        assert rejected.isError  # a reason is required
        esc = await call(
            b, "pact_escalate", documentId=doc_id, question="Is the title final?", sectionId=section
        )
        assert esc
        changes = await call(a, "pact_poll", documentId=doc_id)
        kinds = [c["type"] for c in changes["changes"]]
        assert "pact.agent.joined" in kinds
        agents = await call(a, "pact_agents", documentId=doc_id)
        assert {x["agentName"] for x in agents["agents"]} == {"Alice", "Bob"}
        await call(b, "pact_leave", documentId=doc_id)


async def test_tool_errors_are_results_not_transport_failures(docs: Any, runtime: Any):
    reader = await make_key(runtime, scopes="documents:read,tap:read")
    async with connect(docs, reader) as session:
        bad = await session.call_tool("pact_get", {})
        assert bad.isError
        assert "documentId" in text_of(bad)
        missing = await session.call_tool("pact_get", {"documentId": "00000000-0000-4000-8000-000000000000"})
        assert missing.isError
        assert json.loads(text_of(missing))["status"] == 404
        scoped = await session.call_tool("pact_join", {"documentId": "x", "agentName": "A"})
        assert scoped.isError
        assert json.loads(text_of(scoped))["error"] == "insufficient_scope"


async def test_raw_transport_edge_cases(docs: Any, runtime: Any):
    key = await make_key(runtime)
    resp = await docs.post("/mcp", json=INIT, headers=ACCEPT)
    assert resp.status == 401
    assert resp.content_type == "application/problem+json"
    headers = {**ACCEPT, **key["headers"]}
    resp = await docs.post("/mcp", data=b"{nope", headers={**headers, "Content-Type": "application/json"})
    assert (await resp.json())["error"]["code"] == -32700
    resp = await docs.post("/mcp", json={"hello": "world"}, headers=headers)
    assert (await resp.json())["error"]["code"] == -32600
    resp = await docs.post(
        "/mcp", json={**INIT, "params": {**INIT["params"], "protocolVersion": "1999-01-01"}}, headers=headers
    )
    assert (await resp.json())["result"]["protocolVersion"] != "1999-01-01"  # negotiated to one we support
    resp = await docs.post("/mcp", json=INIT, headers=headers)
    assert (await resp.json())["result"]["protocolVersion"] == "2025-06-18"
    session_id = resp.headers["Mcp-Session-Id"]
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    assert (await docs.post("/mcp", json=ping, headers=headers)).status == 400  # no session header
    resp = await docs.post("/mcp", json=ping, headers={**headers, "Mcp-Session-Id": "unknown"})
    assert resp.status == 404
    with_session = {**headers, "Mcp-Session-Id": session_id}
    resp = await docs.post(
        "/mcp", json={"jsonrpc": "2.0", "id": 3, "method": "nope/never"}, headers=with_session
    )
    assert (await resp.json())["error"]["code"] == -32601
    resp = await docs.post(
        "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=with_session
    )
    assert resp.status == 202
    resp = await docs.post("/mcp", json=ping, headers={**with_session, "Accept": "text/event-stream"})
    assert resp.content_type == "text/event-stream"
    body = await resp.text()
    assert body.startswith("event: message\ndata: ")
    assert json.loads(body.split("data: ", 1)[1])["id"] == 2
    assert (await docs.get("/mcp", headers=with_session)).status == 405
    other = await make_key(runtime, name="other")
    resp = await docs.post(
        "/mcp", json=ping, headers={**ACCEPT, **other["headers"], "Mcp-Session-Id": session_id}
    )
    assert resp.status == 404  # a session belongs to the key that opened it
    assert (await docs.delete("/mcp", headers=with_session)).status == 204
    assert (await docs.post("/mcp", json=ping, headers=with_session)).status == 404


async def test_discovery_document(docs: Any):
    body = await (await docs.get("/.well-known/mcp.json")).json()
    assert body["transport"] == "streamable-http"
    assert body["endpoint"].endswith("/mcp")
    assert body["auth"]["header"] == "X-Api-Key"
    assert {t["name"] for t in body["tools"]} >= {"pact_join", "pact_upload_document"}


async def test_a_session_is_used_and_kept_alive_then_ends_after_an_idle_hour(
    docs: Any, runtime: Any, clock: Any
):
    from datetime import timedelta

    from domain import wiring
    from domain.kernel import sweeps

    key = await make_key(runtime)
    headers = {**ACCEPT, **key["headers"]}
    session_id = (await docs.post("/mcp", json=INIT, headers=headers)).headers["Mcp-Session-Id"]
    with_session = {**headers, "Mcp-Session-Id": session_id}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    for _ in range(3):  # each use within the hour keeps it alive
        clock.advance(timedelta(minutes=50))
        assert (await docs.post("/mcp", json=ping, headers=with_session)).status == 200
    clock.advance(timedelta(minutes=61))
    assert (await docs.post("/mcp", json=ping, headers=with_session)).status == 404
    sweep = next(s for s in wiring.SWEEPS if s.name == "documents.expire_mcp_sessions")
    assert await sweeps.run(runtime.db, sweep, "test") == 1  # the idle session is forgotten
