"""The MCP server of the document API, driven by the official `mcp` SDK client (2.x) over streamable HTTP at
protocol 2026-07-28 and at the handshake revision 2025-11-25, plus raw HTTP for the transport's edge cases
and the Origin/Host guard."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as mt
import pytest
from mcp import Client, MCPDeprecationWarning, MCPError
from mcp.client.streamable_http import streamable_http_client

from tests import built_documents
from tests.documents_support import make_key, upload_ready
from tests.waiting import eventually

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
INIT: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream"}
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


@asynccontextmanager
async def connect(
    docs: Any, key: dict[str, Any], mode: str = "auto", **options: Any
) -> AsyncIterator[Client]:
    """A 2.x SDK client: `auto` discovers (server/discover) and speaks 2026-07-28 here; `legacy` performs
    the initialize handshake as a 1.x client does."""
    url = str(docs.make_url("/mcp"))
    async with httpx2.AsyncClient(headers=key["headers"], timeout=httpx2.Timeout(30, read=60)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode, **options) as client:
            yield client


def text_of(result: mt.CallToolResult) -> str:
    return next((c.text for c in result.content if isinstance(c, mt.TextContent)), "")


async def call(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, text_of(result)
    return result.structured_content or json.loads(text_of(result))


async def wait_ready(client: Client, doc_id: str) -> dict[str, Any]:
    for _ in range(300):
        doc = await call(client, "pact_get_document", documentId=doc_id)
        if doc["status"] != "processing":
            assert doc["status"] == "ready", doc
            return doc
        await asyncio.sleep(0.1)
    raise AssertionError("document never became ready")


def markdown_of(result: mt.ReadResourceResult) -> str:
    content = result.contents[0]
    assert isinstance(content, mt.TextResourceContents)
    assert content.mime_type == "text/markdown"
    return content.text


async def test_discover_and_list_tools_at_2026_07_28(docs: Any, runtime: Any):
    key = await make_key(runtime)
    async with connect(docs, key) as client:
        assert client.protocol_version == MODERN
        capabilities = client.server_capabilities
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert capabilities.tools is not None
    assert capabilities.prompts is not None
    assert capabilities.resources is not None
    assert capabilities.resources.subscribe
    assert capabilities.completions is not None
    for name in (
        "pact_upload_document",
        "pact_join",
        "pact_sections",
        "pact_lock",
        "pact_escalate",
        "pact_poll",
        "pact_done",
        "pact_completions",
    ):
        assert name in tools
        assert tools[name].description
        assert tools[name].input_schema["type"] == "object"
    assert "documentId" in tools["pact_join"].input_schema["required"]
    assert "agentName" in tools["pact_join"].input_schema["properties"]


async def test_two_agents_take_a_document_to_a_merged_proposal(
    docs: Any, runtime: Any, settings: Any, monkeypatch
):
    """Upload, join, coordinate, propose, vote and merge through tools; read the result through resources,
    and hear about the change on a subscriptions/listen stream."""
    monkeypatch.setattr(settings, "mcp_watch_seconds", 0.05)
    alice, bob = await make_key(runtime, name="alice"), await make_key(runtime, name="bob")
    data = built_documents.docx_bytes()
    logs: list[mt.LoggingMessageNotificationParams] = []

    async def on_log(params: mt.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async with (
        connect(docs, alice, log_level="info", logging_callback=on_log) as a,
        connect(docs, bob) as b,
    ):
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
        assert any(entry.data == {"tool": "pact_join", "done": True} for entry in logs)  # asked for, at info
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
        assert refused.is_error
        assert json.loads(text_of(refused))["status"] == 409
        await call(a, "pact_unlock", documentId=doc_id, sectionId=section)

        doc_uri = f"concord://documents/{doc_id}"
        section_uri = f"{doc_uri}/sections/{section}"
        before = markdown_of(await b.read_resource(section_uri))
        async with b.listen(resource_subscriptions=[doc_uri, section_uri]) as changes:
            assert set(changes.honored.resource_subscriptions or []) == {doc_uri, section_uri}
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
            own = await a.call_tool(
                "pact_approve", {"documentId": doc_id, "proposalId": proposal["proposalId"]}
            )
            assert own.is_error  # an author never votes on its own proposal
            approved = await call(b, "pact_approve", documentId=doc_id, proposalId=proposal["proposalId"])
            assert approved["status"] == "approved"
            heard: set[str] = set()
            with anyio_timeout(30):
                async for event in changes:
                    heard.add(getattr(event, "uri", ""))
                    if heard >= {doc_uri, section_uri}:
                        break
        after = markdown_of(await b.read_resource(section_uri))
        assert after != before
        assert "Rewritten by Alice." in after
        assert "Rewritten by Alice." in markdown_of(await a.read_resource(doc_uri))
        assert "Rewritten by Alice." in (await call(a, "pact_get", documentId=doc_id))["content"]

        rejected = await b.call_tool(
            "pact_reject", {"documentId": doc_id, "proposalId": proposal["proposalId"]}
        )
        assert rejected.is_error  # a reason is required
        esc = await call(
            b, "pact_escalate", documentId=doc_id, question="Is the title final?", sectionId=section
        )
        assert esc
        changes_page = await call(a, "pact_poll", documentId=doc_id)
        assert "pact.agent.joined" in [c["type"] for c in changes_page["changes"]]
        agents = await call(a, "pact_agents", documentId=doc_id)
        assert {x["agentName"] for x in agents["agents"]} == {"Alice", "Bob"}
        done = await call(b, "pact_done", documentId=doc_id, status="aligned", summary="Title reviewed")
        assert (done["status"], done["previousStatus"], done["agentName"]) == ("aligned", None, "Bob")
        again = await call(b, "pact_done", documentId=doc_id, status="partial")
        assert (again["previousStatus"], again["summary"]) == ("aligned", None)
        wrong = await b.call_tool("pact_done", {"documentId": doc_id, "status": "blocked"})
        assert wrong.is_error  # not a PACT status
        listed = await call(a, "pact_completions", documentId=doc_id)
        assert [(x["agentName"], x["status"]) for x in listed["completions"]] == [("Bob", "partial")]
        await call(b, "pact_leave", documentId=doc_id)


def anyio_timeout(seconds: float) -> Any:
    import anyio

    return anyio.fail_after(seconds)


async def test_documents_as_resources_prompts_and_completion(docs: Any, runtime: Any):
    key = await make_key(runtime)
    doc = await upload_ready(docs, key, b"# Budget\n\nTotal 10.\n\n## Line Items\n\nPaper 2.\n", "budget.md")
    other_org = await make_key(runtime, org="Elsewhere")
    elsewhere = await upload_ready(docs, other_org, b"# Secret\n\nHidden.\n", "secret.md")
    doc_uri = f"concord://documents/{doc['id']}"
    async with connect(docs, key) as client:
        listed = (await client.list_resources()).resources
        assert [(r.uri, r.name, r.mime_type) for r in listed] == [(doc_uri, "budget", "text/markdown")]
        with pytest.raises(MCPError) as bad_cursor:
            await client.list_resources(cursor="not-one-of-ours")
        assert bad_cursor.value.data["status"] == 400
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert templates == {
            "concord://documents/{documentId}",
            "concord://documents/{documentId}/sections/{sectionId}",
        }
        assert markdown_of(await client.read_resource(doc_uri)).startswith("# Budget")
        section = markdown_of(await client.read_resource(f"{doc_uri}/sections/sec:budget:line-items"))
        assert section == "## Line Items\n\nPaper 2.\n"
        for bad in (
            f"concord://documents/{elsewhere['id']}",  # another organisation's looks like none
            f"{doc_uri}/sections/sec:nope",
            "file:///etc/passwd",
        ):
            with pytest.raises(MCPError) as refused:
                await client.read_resource(bad)
            assert refused.value.code == mt.INVALID_PARAMS
            assert refused.value.data["status"] == 404, bad

        ref = mt.ResourceTemplateReference(
            type="ref/resource", uri="concord://documents/{documentId}/sections/{sectionId}"
        )
        ids = await client.complete(ref, {"name": "documentId", "value": doc["id"][:4]})
        assert ids.completion.values == [doc["id"]]
        sections = await client.complete(
            ref, {"name": "sectionId", "value": "sec:budget:"}, context_arguments={"documentId": doc["id"]}
        )
        assert sections.completion.values == ["sec:budget:line-items"]
        prompt_ref = mt.PromptReference(type="ref/prompt", name="review_section")
        assert (await client.complete(prompt_ref, {"name": "documentId", "value": ""})).completion.values == [
            doc["id"]
        ]

        names = {p.name for p in (await client.list_prompts()).prompts}
        assert names == {"review_section", "propose_edit"}
        await call(client, "pact_join", documentId=doc["id"], agentName="Ann", role="editor")
        await call(
            client,
            "pact_constraint_publish",
            documentId=doc["id"],
            sectionId="sec:budget",
            boundary="Keep totals",
        )
        prompt = await client.get_prompt(
            "propose_edit", {"documentId": doc["id"], "sectionId": "sec:budget", "goal": "Round the numbers"}
        )
        text = prompt.messages[0].content
        assert isinstance(text, mt.TextContent)
        assert "Keep totals" in text.text
        assert "Total 10." in text.text
        assert "pact_propose" in text.text
        review = await client.get_prompt(
            "review_section", {"documentId": doc["id"], "sectionId": "sec:budget"}
        )
        assert "pact_approve" in review.messages[0].content.text  # type: ignore[union-attr]
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("review_section", {"documentId": doc["id"]})
        assert "sectionId" in missing.value.message
        with pytest.raises(MCPError):  # a listen stream only follows what the caller may read
            async with client.listen(resource_subscriptions=[f"concord://documents/{elsewhere['id']}"]):
                pass

    reader = await make_key(runtime, scopes="documents:read")
    async with connect(docs, reader) as client:
        assert len((await client.list_resources()).resources) == 1
        with pytest.raises(MCPError) as scoped:
            await client.read_resource(doc_uri)
        assert scoped.value.data["error"] == "insufficient_scope"


async def test_a_handshake_client_at_2025_11_25_is_served_too(docs: Any, runtime: Any):
    """The initialize handshake of the older revisions, through the SDK's legacy mode and by raw HTTP: no
    session is issued, so each later request stands alone (any process can answer it)."""
    key = await make_key(runtime)
    doc = await upload_ready(docs, key, b"# Notes\n\nFirst.\n", "notes.md")
    async with connect(docs, key, mode="legacy") as client:
        assert client.protocol_version == LEGACY
        assert client.server_info is not None
        assert client.server_info.name == "concord-documents"
        with pytest.warns(MCPDeprecationWarning):  # gone from 2026-07-28, not from 2025-11-25
            await client.send_ping()
        with pytest.warns(MCPDeprecationWarning):
            await client.set_logging_level("warning")
        assert "pact_join" in {t.name for t in (await client.list_tools()).tools}
        got = await call(client, "pact_get", documentId=doc["id"])
        assert got["content"].startswith("# Notes")
        assert markdown_of(await client.read_resource(f"concord://documents/{doc['id']}")).startswith(
            "# Notes"
        )
        assert {p.name for p in (await client.list_prompts()).prompts} == {"review_section", "propose_edit"}

    headers = {**ACCEPT, **key["headers"]}
    resp = await docs.post("/mcp", json=INIT, headers=headers)
    assert resp.status == 200
    assert "Mcp-Session-Id" not in resp.headers  # stateless
    answer = await _json_or_sse(resp)
    assert answer["result"]["protocolVersion"] == LEGACY
    assert answer["result"]["capabilities"]["resources"]
    later = {**headers, "MCP-Protocol-Version": LEGACY}
    resp = await docs.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=later)
    assert resp.status == 200
    assert len((await _json_or_sse(resp))["result"]["tools"]) == 34
    resp = await docs.post(
        "/mcp", json={**INIT, "params": {**INIT["params"], "protocolVersion": "1999-01-01"}}, headers=headers
    )
    assert (await _json_or_sse(resp))["result"][
        "protocolVersion"
    ] != "1999-01-01"  # negotiated to one we speak


async def _json_or_sse(resp: Any) -> dict[str, Any]:
    body = await resp.text()
    if resp.content_type == "text/event-stream":
        data = [line[6:] for line in body.splitlines() if line.startswith("data: ")]
        return json.loads(data[-1])
    return json.loads(body)


async def test_tool_errors_are_results_not_transport_failures(docs: Any, runtime: Any):
    reader = await make_key(runtime, scopes="documents:read,tap:read")
    async with connect(docs, reader) as client:
        bad = await client.call_tool("pact_get", {})
        assert bad.is_error
        assert "documentId" in text_of(bad)
        missing = await client.call_tool("pact_get", {"documentId": "00000000-0000-4000-8000-000000000000"})
        assert missing.is_error
        assert json.loads(text_of(missing))["status"] == 404
        scoped = await client.call_tool("pact_join", {"documentId": "x", "agentName": "A"})
        assert scoped.is_error
        assert json.loads(text_of(scoped))["error"] == "insufficient_scope"


async def test_raw_transport_edge_cases(docs: Any, runtime: Any):
    key = await make_key(runtime)
    resp = await docs.post("/mcp", json=INIT, headers=ACCEPT)
    assert resp.status == 401
    assert resp.content_type == "application/problem+json"
    headers = {**ACCEPT, **key["headers"]}
    resp = await docs.post("/mcp", data=b"{nope", headers={**headers, "Content-Type": "application/json"})
    assert (await resp.json())["error"]["code"] == mt.PARSE_ERROR
    modern = {**headers, "MCP-Protocol-Version": MODERN}
    resp = await docs.post("/mcp", json={"hello": "world"}, headers=modern)
    assert resp.status == 400
    assert (await resp.json())["error"]["code"] == mt.INVALID_REQUEST
    tools_list = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": ENVELOPE}}
    resp = await docs.post("/mcp", json=tools_list, headers={**modern, "Mcp-Method": "tools/list"})
    assert resp.status == 200
    answer = await resp.json()
    assert len(answer["result"]["tools"]) == 34
    assert answer["result"]["resultType"] == "complete"
    resp = await docs.post(
        "/mcp", json={**tools_list, "params": {}}, headers={**modern, "Mcp-Method": "tools/list"}
    )
    assert resp.status == 400  # the 2026-07-28 envelope is required
    assert "_meta" in (await resp.json())["error"]["message"]
    nope = {"jsonrpc": "2.0", "id": 4, "method": "nope/never", "params": {"_meta": ENVELOPE}}
    resp = await docs.post("/mcp", json=nope, headers={**modern, "Mcp-Method": "nope/never"})
    assert resp.status == 404
    assert (await resp.json())["error"]["code"] == mt.METHOD_NOT_FOUND
    resp = await docs.post(
        "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=modern
    )
    assert resp.status == 202
    for sent in (headers, modern):  # no standing stream to open, no session to end
        for method in ("GET", "DELETE"):
            resp = await docs.request(method, "/mcp", headers=sent)
            assert resp.status == 405
            assert resp.headers["Allow"] == "POST"


async def test_foreign_origins_and_hosts_are_refused_before_authentication(
    docs: Any, runtime: Any, settings: Any, monkeypatch
):
    key = await make_key(runtime)
    headers = {**ACCEPT, **key["headers"]}
    own = f"http://{docs.host}:{docs.port}"
    for origin in ("http://evil.example", "null", f"http://{docs.host}:1"):
        for sent in (headers, ACCEPT):  # with a key or without one: refused before authentication
            resp = await docs.post("/mcp", json=INIT, headers={**sent, "Origin": origin})
            assert resp.status == 403, origin
            body = await resp.json()
            assert body["jsonrpc"] == "2.0"
            assert body["error"]["code"] == mt.INVALID_REQUEST
            assert "Origin" in body["error"]["message"]
    resp = await docs.post("/mcp", json=INIT, headers={**headers, "Origin": own})
    assert resp.status == 200  # same origin
    resp = await docs.post("/mcp", json=INIT, headers=headers)
    assert resp.status == 200  # no Origin: a desktop or server client
    monkeypatch.setattr(settings, "mcp_allowed_origins", ["https://app.example"])
    resp = await docs.post("/mcp", json=INIT, headers={**headers, "Origin": "https://app.example"})
    assert resp.status == 200
    # Listening on loopback, a rebound name in Host is refused even when the Origin matches it.
    rebound = {**headers, "Host": "evil.example:8081", "Origin": "http://evil.example:8081"}
    resp = await docs.post("/mcp", json=INIT, headers=rebound)
    assert resp.status == 403
    assert "Host" in (await resp.json())["error"]["message"]
    resp = await docs.post("/mcp", json=INIT, headers={**headers, "Host": f"localhost:{docs.port}"})
    assert resp.status == 200


async def test_discovery_document(docs: Any):
    body = await (await docs.get("/.well-known/mcp.json")).json()
    assert body["transport"] == "streamable-http"
    assert body["endpoint"].endswith("/mcp")
    assert body["protocolVersions"][0] == MODERN
    assert LEGACY in body["protocolVersions"]
    assert body["auth"]["header"] == "X-Api-Key"
    assert {t["name"] for t in body["tools"]} >= {"pact_join", "pact_upload_document"}


def test_the_origin_rule():
    from web.docs.mcp.origin import refusal

    def allowed(
        origin: str | None, host: str, bind: str = "127.0.0.1", extra: list[str] | None = None
    ) -> bool:
        return refusal(origin=origin, host=host, bind_host=bind, allowed=extra or []) is None

    assert allowed(None, "127.0.0.1:8081")
    assert allowed(None, "[::1]:8081")
    assert allowed(None, "localhost")
    assert allowed("http://LOCALHOST:8081", "localhost:8081")  # same origin, case aside
    assert not allowed("http://localhost:8082", "localhost:8081")  # another port is another origin
    assert not allowed(None, "evil.example:8081")  # a rebound name on a loopback bind
    assert allowed("https://docs.example", "docs.example", bind="0.0.0.0")  # behind a TLS proxy
    assert allowed("https://docs.example:443", "docs.example", bind="0.0.0.0")  # the default port
    assert not allowed("https://evil.example", "docs.example", bind="0.0.0.0")
    assert allowed("https://app.example", "docs.example", bind="0.0.0.0", extra=["https://app.example/"])
    assert allowed("http://tools.lan:6274", "tools.lan:8081", extra=["http://tools.lan:6274"])  # its host too


async def test_the_watcher_tells_a_section_apart_from_its_document(docs: Any, runtime: Any):
    """What a listen stream hears, decided without waiting: a merge in one section changes the document and
    that section, not another section."""
    from web.docs.mcp.resources import DocumentWatcher, Target
    from web.docs.mcp.transport import started

    alice, bob = await make_key(runtime, name="alice"), await make_key(runtime, name="bob")
    doc = await upload_ready(docs, alice, b"# One\n\nFirst.\n\n# Two\n\nSecond.\n", "two.md")
    service: Any = await started(docs.server.app)  # the app's MCP service (built at its first MCP request)
    published: list[str] = []
    unsubscribe = service.bus.subscribe(lambda event: published.append(event.uri))
    watcher: DocumentWatcher = service.watcher
    base = f"concord://documents/{doc['id']}"
    followed = {base: Target(doc["id"]), f"{base}/sections/sec:one": Target(doc["id"], "sec:one")}
    followed[f"{base}/sections/sec:two"] = Target(doc["id"], "sec:two")
    async with connect(docs, alice) as a, connect(docs, bob) as b:
        await call(a, "pact_join", documentId=doc["id"], agentName="Alice", role="editor")
        await call(b, "pact_join", documentId=doc["id"], agentName="Bob", role="reviewer")
        who = await _caller(runtime, alice)
        await watcher.follow(who, followed)
        try:
            assert await watcher.check() == 0
            proposal = await call(
                a,
                "pact_propose",
                documentId=doc["id"],
                sectionId="sec:two",
                content="Changed.",
                summary="Change two",
            )
            await call(b, "pact_approve", documentId=doc["id"], proposalId=proposal["proposalId"])
            # The merge's events may have woken the watcher already (infra/live): told once either way.
            await watcher.check()

            async def told() -> bool:
                return len(published) >= 2

            await eventually(told, timeout=10)
            assert sorted(published) == [base, f"{base}/sections/sec:two"]
            assert await watcher.check() == 0  # told once
        finally:
            watcher.unfollow(followed)
            unsubscribe()


async def _caller(runtime: Any, key: dict[str, Any]) -> Any:
    from domain.documents import servicekeys
    from domain.documents.access import Caller
    from domain.kernel.context import SYSTEM

    async with runtime.db.read() as session:
        found = await servicekeys.authenticate(session, key["apiKey"])
    return Caller(ctx=SYSTEM, org_id=found.org_id, key_id=found.id, name=found.name)
