"""The MCP tools as the model APIs behind MCP hosts see them: every tool listed over the real endpoint (the
SDK client's tools/list) is linted against the rules Anthropic's and OpenAI's tool APIs apply, every tool's
result follows the output schema it declares, the read-only hints are true, and protocol-level answers (an
unknown tool) are neither malformed-request statuses nor logged as such.

What Concord claims, and the rules behind each claim (read November 2026; docs/mcp.md repeats the claims and
docs/decisions.md the reasons):

- Anthropic Messages API, custom tools (docs.anthropic.com, "Tool use" and the `tools` parameter of the API
  reference): `name` matches ^[a-zA-Z0-9_-]{1,64}$; `input_schema` is a JSON Schema with `type: "object"`;
  a tool list in which one `input_schema` has `oneOf`, `allOf` or `anyOf` at its top level fails the whole
  request ("input_schema does not support oneOf, allOf, or anyOf at the top level"). Custom tools of managed
  agents add: no `$ref` anywhere, property names of 1-64 letters, digits, `_`, `.` or `-`.
- OpenAI function calling (platform.openai.com, "Function calling"), not strict mode: the function `name`
  is a-z, A-Z, 0-9, `_` and `-`, at most 64 characters; `parameters` is a JSON Schema object; the
  description is at most 1024 characters ("string_above_max_length") and a request holds at most 128 tools
  ("array_above_max_length"); Codex refuses a top-level `anyOf` as well. Of strict mode ("Structured
  Outputs: supported schemas") the parts that do not change what a call means are kept too: every object
  closed (`additionalProperties: false`), none of the keywords it does not support (`allOf`, `not`,
  `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`), at most 10 levels of nesting, 5,000
  properties and 1,000 enum values. Not claimed: strict mode's "every property is required" (optional
  arguments would have to become required nullable ones).
- MCP (specification 2025-11-25 and 2026-07-28, server/tools): names of 1-128 characters of letters, digits,
  `_`, `-` and `.`; `inputSchema` and `outputSchema` are JSON Schema objects (2025-06-18 and 2025-11-25
  clients need `type: "object"` for the output schema); `annotations` carry the hints hosts decide
  approvals with. Concord adds: every hint stated (the defaults assume the worst), a `title`, and a human
  title and a description for every parameter.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
import uuid
from collections.abc import Iterator
from typing import Any

import mcp_types as mt
import pytest
from jsonschema import Draft202012Validator, FormatChecker
from mcp import MCPError

from tests.documents_support import make_key
from tests.test_mcp import ACCEPT, ENVELOPE, LEGACY, MODERN, _json_or_sse, connect, text_of

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # Anthropic tools[].name and OpenAI function names alike
MCP_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
PROPERTY_NAME = re.compile(r"^[a-zA-Z0-9_.-]{1,64}$")  # Anthropic managed agents' custom tools
COMBINATORS = ("oneOf", "allOf", "anyOf")
OPENAI_UNSUPPORTED = ("allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas")
OPENAI_MAX_DESCRIPTION = 1024
OPENAI_MAX_TOOLS = 128
OPENAI_MAX_DEPTH = 10
OPENAI_MAX_PROPERTIES = 5000
OPENAI_MAX_ENUM_VALUES = 1000
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def subschemas(schema: Any, depth: int = 0) -> Iterator[tuple[dict[str, Any], int]]:
    """Every schema inside `schema` (itself first) with its object nesting depth; property names are never
    taken for keywords."""
    if not isinstance(schema, dict):
        return
    yield schema, depth
    inner = depth + 1 if schema.get("type") == "object" or "properties" in schema else depth
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        for child in (schema.get(key) or {}).values():
            yield from subschemas(child, inner)
    for key in ("items", "additionalProperties", "not", "if", "then", "else", "contains"):
        yield from subschemas(schema.get(key), inner)
    for key in (*COMBINATORS, "prefixItems"):
        for child in schema.get(key) or []:
            yield from subschemas(child, depth)


def generated_title(name: str) -> str:
    """The title pydantic makes of a field name (`contentBase64` -> `Contentbase64`)."""
    return name.replace("_", " ").title()


def anthropic_problems(tool: dict[str, Any]) -> list[str]:
    found = []
    name, schema = tool.get("name", ""), tool.get("inputSchema")
    if not TOOL_NAME.match(name):
        found.append(f"name {name!r} does not match {TOOL_NAME.pattern}")
    if not tool.get("description"):
        found.append("no description")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return [*found, "input_schema is not an object schema"]
    found += [f"input_schema has {c} at the top level" for c in COMBINATORS if c in schema]
    for sub, _ in subschemas(schema):
        if "$ref" in sub:
            found.append(f"input_schema has a $ref ({sub['$ref']})")
    found += [f"property name {p!r}" for p in schema.get("properties", {}) if not PROPERTY_NAME.match(p)]
    return found


def openai_problems(tool: dict[str, Any]) -> list[str]:
    found = []
    name, schema = tool.get("name", ""), tool.get("inputSchema")
    if not TOOL_NAME.match(name):
        found.append(f"function name {name!r} does not match {TOOL_NAME.pattern}")
    if len(tool.get("description") or "") > OPENAI_MAX_DESCRIPTION:
        found.append(f"description longer than {OPENAI_MAX_DESCRIPTION} characters")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return [*found, "parameters is not an object schema"]
    if "anyOf" in schema:
        found.append("parameters has anyOf at the top level")
    properties = enums = 0
    for sub, depth in subschemas(schema):
        found += [f"keyword {k} (not supported)" for k in OPENAI_UNSUPPORTED if k in sub]
        if depth > OPENAI_MAX_DEPTH:
            found.append(f"nested deeper than {OPENAI_MAX_DEPTH} levels")
        if sub.get("type") == "object" and sub.get("additionalProperties") is not False:
            found.append("an object schema without additionalProperties: false")
        properties += len(sub.get("properties", {}))
        enums += len(sub.get("enum", []))
    if properties > OPENAI_MAX_PROPERTIES:
        found.append(f"more than {OPENAI_MAX_PROPERTIES} properties")
    if enums > OPENAI_MAX_ENUM_VALUES:
        found.append(f"more than {OPENAI_MAX_ENUM_VALUES} enum values")
    return found


def mcp_problems(tool: dict[str, Any]) -> list[str]:
    found = []
    name = tool.get("name", "")
    if not MCP_TOOL_NAME.match(name):
        found.append(f"name {name!r} is not an MCP tool name")
    if not tool.get("title"):
        found.append("no title")
    annotations = tool.get("annotations") or {}
    if not annotations.get("title"):
        found.append("no annotations.title")
    found += [f"annotations.{h} not stated" for h in HINTS if not isinstance(annotations.get(h), bool)]
    if annotations.get("readOnlyHint") and (
        annotations.get("destructiveHint") or not annotations.get("idempotentHint")
    ):
        found.append("a read-only tool must be non-destructive and idempotent")
    schema = tool.get("inputSchema") or {}
    for prop, spec in schema.get("properties", {}).items():
        title = spec.get("title")
        if not title or (title == generated_title(prop) and prop != prop.lower()):
            found.append(f"parameter {prop}: no human title ({title!r})")
        if not spec.get("description"):
            found.append(f"parameter {prop}: no description")
        if "type" not in spec and "enum" not in spec:
            found.append(f"parameter {prop}: no type")
    output = tool.get("outputSchema")
    if not isinstance(output, dict) or output.get("type") != "object":
        return [*found, "no object outputSchema"]
    found += [f"outputSchema has {c} at the top level" for c in COMBINATORS if c in output]
    try:
        Draft202012Validator.check_schema(output)
    except Exception as exc:  # jsonschema's SchemaError
        found.append(f"outputSchema is not valid JSON Schema: {exc}")
    defs = output.get("$defs", {})
    for sub, _ in subschemas(output):
        ref = sub.get("$ref")
        if ref is not None and not (ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in defs):
            found.append(f"outputSchema has a $ref that does not resolve in the schema: {ref}")
    return found


def problems(tool: dict[str, Any]) -> list[str]:
    return [*anthropic_problems(tool), *openai_problems(tool), *mcp_problems(tool)]


def wire(tools: list[mt.Tool]) -> list[dict[str, Any]]:
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def test_the_lint_catches_what_the_model_apis_refuse():
    """The rules above fail on the shapes they are there for: the tool list that broke Claude clients."""
    refused = {
        "name": "pact escalate",
        "description": "x" * 1025,
        "inputSchema": {
            "type": "object",
            "oneOf": [{"required": ["question"]}, {"required": ["message"]}],
            "properties": {
                "documentId": {"type": "string", "title": "Documentid"},
                "role": {"$ref": "#/$defs/Role"},
                "bad name": {"type": "string", "title": "Bad", "description": "x"},
            },
        },
    }
    found = problems(refused)
    for expected in (
        "name 'pact escalate' does not match",
        "input_schema has oneOf at the top level",
        "input_schema has a $ref",
        "property name 'bad name'",
        "description longer than 1024",
        "an object schema without additionalProperties: false",
        "no title",
        "annotations.readOnlyHint not stated",
        "parameter documentId: no human title",
        "parameter documentId: no description",
        "no object outputSchema",
    ):
        assert any(p.startswith(expected) for p in found), (expected, found)
    assert not problems(
        {
            "name": "ok",
            "title": "OK",
            "description": "Fine.",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "documentId": {"type": "string", "title": "Document ID", "description": "Its id."}
                },
            },
            "outputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
            "annotations": {"title": "OK", **{h: h in ("readOnlyHint", "idempotentHint") for h in HINTS}},
        }
    )


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_every_tool_passes_the_rules_of_anthropic_openai_and_mcp(docs: Any, runtime: Any, mode: str):
    key = await make_key(runtime)
    async with connect(docs, key, mode=mode) as client:
        assert client.protocol_version == (MODERN if mode == "auto" else LEGACY)
        tools = wire((await client.list_tools()).tools)
    assert len(tools) == 34
    assert len(tools) <= OPENAI_MAX_TOOLS
    found = {t["name"]: p for t in tools if (p := problems(t))}
    assert found == {}, json.dumps(found, indent=1)
    escalate = next(t for t in tools if t["name"] == "pact_escalate")
    assert {"question", "message"} <= set(escalate["inputSchema"]["properties"])
    assert "question" in escalate["description"]
    assert "message" in escalate["description"]
    propose = next(t for t in tools if t["name"] == "pact_propose")
    assert "300" in propose["description"]  # the proposal's lifetime, said where the model reads it
    upload = next(t for t in tools if t["name"] == "pact_upload_document")
    assert upload["inputSchema"]["properties"]["contentBase64"]["title"] == "Content (base64)"


async def test_the_discovery_document_lists_the_same_tools(docs: Any, runtime: Any):
    key = await make_key(runtime)
    async with connect(docs, key) as client:
        listed = {t["name"]: t for t in wire((await client.list_tools()).tools)}
    discovered = (await (await docs.get("/.well-known/mcp.json")).json())["tools"]
    assert [t["name"] for t in discovered] == list(listed)
    for tool in discovered:
        same = listed[tool["name"]]
        for field in ("title", "description", "inputSchema", "outputSchema", "annotations"):
            assert tool[field] == same[field], (tool["name"], field)


async def test_every_tool_answers_what_its_output_schema_declares(docs: Any, runtime: Any):
    """All 34 tools called through the SDK client, each result's structuredContent validated against the
    outputSchema listed for it; the read-only ones change nothing (no event, no new version)."""
    alice, bob = await make_key(runtime, name="alice"), await make_key(runtime, name="bob")
    checked: dict[str, int] = {}
    async with connect(docs, alice) as a, connect(docs, bob) as b:
        listed = {t.name: t for t in (await a.list_tools()).tools}

        async def call(client: Any, name: str, **arguments: Any) -> dict[str, Any]:
            result = await client.call_tool(name, arguments)
            assert not result.is_error, (name, text_of(result))
            schema = listed[name].output_schema
            assert schema is not None, f"{name} declares no output schema"
            errors = [
                e.message
                for e in Draft202012Validator(schema, format_checker=FormatChecker()).iter_errors(
                    result.structured_content
                )
            ]
            assert errors == [], (name, errors)
            assert json.loads(text_of(result)) == result.structured_content
            checked[name] = checked.get(name, 0) + 1
            answer: dict[str, Any] = result.structured_content
            return answer

        doc = await call(
            a,
            "pact_upload_document",
            filename="plan.md",
            contentBase64=base64.b64encode(b"# Plan\n\nDraft.\n\n## Budget\n\nTen.\n").decode(),
            title="Plan",
            tags=["schemas"],
        )
        doc_id = doc["id"]
        for _ in range(300):
            if (await call(a, "pact_get_document", documentId=doc_id))["status"] == "ready":
                break
            await asyncio.sleep(0.1)
        await call(b, "pact_list_documents", tag="schemas")
        onboarded = await call(
            a,
            "pact_onboard",
            documentId=doc_id,
            agentName="Alice",
            role="proposer",  # PACT's role descriptor: joins as an editor, shown as given
            contact={"email": "alice-ops@example.org"},
            constraints=[{"sectionId": "sec:plan", "boundary": "Stay brief", "type": "should"}],
        )
        assert (onboarded["role"], onboarded["registration"]["role"]) == ("proposer", "editor")
        await call(b, "pact_join", documentId=doc_id, agentName="Bob", role="reviewer")
        section = "sec:plan:budget"
        intent = await call(
            a, "pact_intent_declare", documentId=doc_id, sectionId=section, goal="Round the figure"
        )
        await call(b, "pact_intent_object", documentId=doc_id, intentId=intent["intentId"], reason="Keep it")
        await call(
            b, "pact_constraint_publish", documentId=doc_id, sectionId=section, boundary="Keep it short"
        )
        await call(b, "pact_salience_set", documentId=doc_id, sectionId=section, score=7)
        await call(a, "pact_lock", documentId=doc_id, sectionId=section, ttlSeconds=60)
        await call(a, "pact_unlock", documentId=doc_id, sectionId=section)
        await call(b, "pact_escalate", documentId=doc_id, question="Is ten right?", sectionId=section)
        await call(
            b,
            "pact_ask_human",
            documentId=doc_id,
            question="Ten or eleven?",
            context="Rounding",
            sectionId=section,
        )
        merged = await call(
            a, "pact_propose", documentId=doc_id, sectionId=section, content="Eleven.", summary="Fix"
        )
        await call(b, "pact_approve", documentId=doc_id, proposalId=merged["proposalId"])
        refused = await call(
            a, "pact_propose", documentId=doc_id, sectionId=section, content="Nine.", summary="No"
        )
        await call(b, "pact_reject", documentId=doc_id, proposalId=refused["proposalId"], reason="Too low")
        paused = await call(
            a, "pact_propose", documentId=doc_id, sectionId=section, content="Twelve.", summary="?"
        )
        await call(b, "pact_object", documentId=doc_id, proposalId=paused["proposalId"], reason="Ask a human")
        dropped = await call(
            a, "pact_propose", documentId=doc_id, sectionId=section, content="Ten.", summary="Never mind"
        )
        await call(a, "pact_withdraw", documentId=doc_id, proposalId=dropped["proposalId"])
        await call(a, "pact_done", documentId=doc_id, status="aligned", summary="Budget reviewed")

        await call(a, "pact_heartbeat", documentId=doc_id, client_heartbeat_id=str(uuid.uuid4()))
        await call(a, "pact_mark_read", documentId=doc_id, from_event_id="evt_1", to_event_id="evt_2")
        before = await call(a, "pact_poll", documentId=doc_id, limit=200)
        version = (await call(a, "pact_get_document", documentId=doc_id))["version"]
        read_only = [name for name, t in listed.items() if t.annotations and t.annotations.read_only_hint]
        reads: dict[str, dict[str, Any]] = {
            "pact_list_documents": {},
            "pact_get_document": {"documentId": doc_id},
            "pact_get": {"documentId": doc_id},
            "pact_sections": {"documentId": doc_id},
            "pact_agents": {"documentId": doc_id},
            "pact_intents": {"documentId": doc_id, "sectionId": section},
            "pact_constraints": {"documentId": doc_id},
            "pact_salience_map": {"documentId": doc_id},
            "pact_poll": {"documentId": doc_id, "since": before["cursor"]},
            "pact_proposals": {"documentId": doc_id, "status": "approved"},
            "pact_completions": {"documentId": doc_id},
            "pact_human_responses": {"documentId": doc_id, "status": "pending"},
            "pact_status": {"documentId": doc_id},
            "pact_manifest": {"documentId": doc_id},
        }
        assert sorted(read_only) == sorted(reads)
        for name in read_only:
            await call(b, name, **reads[name])
        peers = (await call(b, "pact_manifest", documentId=doc_id))["counterparties"]
        alice = next(p for p in peers if p["display_name"] == "Alice")
        assert (alice["role"], alice["contact"]) == ("proposer", {"email": "alice-ops@example.org"})
        after = await call(a, "pact_poll", documentId=doc_id, since=before["cursor"])
        assert after["changes"] == []  # the read-only tools recorded nothing
        assert (await call(a, "pact_get_document", documentId=doc_id))["version"] == version
        await call(b, "pact_leave", documentId=doc_id)
    assert set(checked) == set(listed), set(listed) - set(checked)


async def test_escalate_needs_question_or_message_checked_by_the_tool(docs: Any, runtime: Any):
    """The either-or rule is no longer a top-level oneOf in the schema: the tool checks it before anything
    else and answers a tool error naming both fields."""
    key = await make_key(runtime, scopes="tap:read,tap:write,documents:read")
    missing = "00000000-0000-4000-8000-000000000000"  # no such document: the arguments are checked first
    async with connect(docs, key) as client:
        for arguments in (
            {"documentId": missing},
            {"documentId": missing, "question": "Yes?", "message": "No?"},
        ):
            result = await client.call_tool("pact_escalate", arguments)
            assert result.is_error, arguments
            body = json.loads(text_of(result))
            assert body["error"] == "invalid_arguments", body
            assert body["status"] == 400
            assert "question" in body["detail"], body
            assert "message" in body["detail"], body
        same = await client.call_tool(
            "pact_escalate", {"documentId": missing, "question": "Q?", "message": "Q?"}
        )
        assert json.loads(text_of(same))["status"] == 404  # valid arguments: on to the document, unknown


async def test_an_unknown_tool_is_a_protocol_error_answered_not_a_bad_request(
    docs: Any, runtime: Any, caplog: pytest.LogCaptureFixture
):
    """JSON-RPC -32602 "Unknown tool" (the spec's protocol error), sent in a 200 and logged as an MCP answer:
    the HTTP exchange was well formed, so neither the access log nor the request metrics (which read the same
    status) see a 400."""
    caplog.set_level(logging.INFO)
    key = await make_key(runtime)
    modern = {**ACCEPT, **key["headers"], "MCP-Protocol-Version": MODERN}
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "pact_nope", "arguments": {}, "_meta": ENVELOPE},
    }
    resp = await docs.post(
        "/mcp",
        json=call,
        headers={
            **modern,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "pact_nope",
            "X-Request-Id": "unknown-tool-1",
        },
    )
    assert resp.status == 200
    error = (await resp.json())["error"]
    assert error["code"] == mt.INVALID_PARAMS
    assert "pact_nope" in error["message"]
    access = [
        r
        for r in caplog.records
        if r.name == "concord.access" and getattr(r, "request_id", "") == "unknown-tool-1"
    ]
    assert [getattr(r, "status", None) for r in access] == [200]
    told = [r.getMessage() for r in caplog.records if r.name == "concord.mcp"]
    assert any("pact_nope" in line and "-32602" in line for line in told), told

    legacy = {**ACCEPT, **key["headers"], "MCP-Protocol-Version": LEGACY}
    resp = await docs.post(
        "/mcp", json={**call, "params": {"name": "pact_nope", "arguments": {}}}, headers=legacy
    )
    assert resp.status == 200
    assert (await _json_or_sse(resp))["error"]["code"] == mt.INVALID_PARAMS
    async with connect(docs, key) as client:
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("pact_nope", {})
        assert unknown.value.code == mt.INVALID_PARAMS

    # A resource refused is an answer of ours too; its data carries Concord's error code and status.
    uri = "concord://documents/00000000-0000-4000-8000-000000000000"
    read = {"jsonrpc": "2.0", "id": 8, "method": "resources/read", "params": {"uri": uri, "_meta": ENVELOPE}}
    resp = await docs.post(
        "/mcp", json=read, headers={**modern, "Mcp-Method": "resources/read", "Mcp-Name": uri}
    )
    assert resp.status == 200
    error = (await resp.json())["error"]
    assert error["code"] == mt.INVALID_PARAMS
    assert error["data"] == {"error": "document_not_found", "status": 404}

    # The transport's own refusals keep theirs: a missing envelope is a malformed request, an unknown
    # method a 404, as the 2026-07-28 transport asks.
    resp = await docs.post(
        "/mcp",
        json={**call, "params": {"name": "pact_get", "arguments": {}}},
        headers={**modern, "Mcp-Method": "tools/call", "Mcp-Name": "pact_get"},
    )
    assert resp.status == 400
    nope = {"jsonrpc": "2.0", "id": 9, "method": "nope/never", "params": {"_meta": ENVELOPE}}
    resp = await docs.post("/mcp", json=nope, headers={**modern, "Mcp-Method": "nope/never"})
    assert resp.status == 404
