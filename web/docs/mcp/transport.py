"""MCP streamable HTTP transport on aiohttp: JSON-RPC over POST /mcp, answered as JSON or as an SSE stream
as the client accepts; sessions by the Mcp-Session-Id header; DELETE ends a session.

Messages are parsed and built with the `mcp` package's types. Sessions live in the database
(domain/documents/mcp_sessions.py), so any web process answers any session: no session affinity needed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import mcp.types as mt
from aiohttp import web
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
from pydantic import BaseModel, ValidationError

from domain.documents import mcp_sessions, servicekeys
from domain.documents.access import Caller
from domain.kernel.errors import DomainError
from web.docs.auth import service_principal
from web.docs.mcp.tools import TOOLS, Tool
from web.kernel.request import runtime
from web.kernel.routing import nul_field

SERVER_NAME = "concord-documents"
SERVER_VERSION = "1.0.0"


@dataclass(frozen=True)
class Client:
    caller: Caller
    scopes: frozenset[str]


async def _client(request: web.Request) -> Client:
    """The service key of the request (401 before anything else runs); each tool checks its own scope."""
    found = await service_principal(request)
    return Client(found.caller, found.scopes)


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def _error(msg_id: mt.RequestId | None, code: int, message: str) -> dict[str, Any]:
    error = mt.ErrorData(code=code, message=message)
    if msg_id is None:  # JSON-RPC answers an unreadable request with a null id, which the typed model refuses
        return {"jsonrpc": "2.0", "id": None, "error": _dump(error)}
    return _dump(mt.JSONRPCError(jsonrpc="2.0", id=msg_id, error=error))


def _result(msg_id: mt.RequestId, result: BaseModel) -> dict[str, Any]:
    return _dump(mt.JSONRPCResponse(jsonrpc="2.0", id=msg_id, result=_dump(result)))


def _reply(
    request: web.Request, body: dict[str, Any], *, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    accept = request.headers.get("Accept", "")
    data = json.dumps(body, separators=(",", ":"))
    if "text/event-stream" in accept and "application/json" not in accept:
        return web.Response(
            text=f"event: message\ndata: {data}\n\n",
            status=status,
            headers=headers,
            content_type="text/event-stream",
        )
    return web.Response(text=data, status=status, headers=headers, content_type="application/json")


def _negotiate(requested: str | int) -> str:
    """The client's protocol version when this server speaks it, else the latest."""
    if isinstance(requested, str) and requested in SUPPORTED_PROTOCOL_VERSIONS:
        return requested
    return mt.LATEST_PROTOCOL_VERSION


async def post(request: web.Request) -> web.Response:
    client = await _client(request)
    who = client.caller
    accept = request.headers.get("Accept", "*/*")
    if not any(t in accept for t in ("application/json", "text/event-stream", "*/*")):
        raise web.HTTPNotAcceptable(text="accept application/json or text/event-stream")
    try:
        raw = json.loads(await request.read())
    except (ValueError, UnicodeDecodeError):
        return _reply(request, _error(None, mt.PARSE_ERROR, "Parse error: the body is not JSON"), status=400)
    try:
        message = mt.JSONRPCMessage.model_validate(raw).root
    except ValidationError:
        return _reply(
            request,
            _error(None, mt.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message"),
            status=400,
        )

    db = runtime(request).db
    if isinstance(message, mt.JSONRPCRequest) and message.method == "initialize":
        try:
            params = mt.InitializeRequestParams.model_validate(message.params or {})
        except ValidationError as exc:
            return _reply(
                request, _error(message.id, mt.INVALID_PARAMS, f"Invalid params: {exc.errors()[0]['msg']}")
            )
        version = _negotiate(params.protocolVersion)
        async with db.transaction() as unit:
            new_id = mcp_sessions.open_session(unit, who.key_id, version)
        result = mt.InitializeResult(
            protocolVersion=version,
            capabilities=mt.ServerCapabilities(tools=mt.ToolsCapability(listChanged=False)),
            serverInfo=mt.Implementation(name=SERVER_NAME, version=SERVER_VERSION),
            instructions="Concord document collaboration: join a document, read its sections, propose, vote, "
            "lock sections and escalate to human reviewers.",
        )
        return _reply(request, _result(message.id, result), headers={"Mcp-Session-Id": new_id})

    session_id = request.headers.get("Mcp-Session-Id")
    if not session_id:
        return _reply(
            request,
            _error(
                getattr(message, "id", None),
                mt.INVALID_REQUEST,
                "Bad Request: Mcp-Session-Id header is required",
            ),
            status=400,
        )
    async with db.read() as unit:
        session = await mcp_sessions.find(unit, session_id, who.key_id)  # another key's looks like none
    if session is None:
        return _reply(
            request,
            _error(getattr(message, "id", None), mt.INVALID_REQUEST, "Session not found: initialize again"),
            status=404,
        )
    if mcp_sessions.needs_touch(session):
        async with db.transaction() as unit:
            await mcp_sessions.touch(unit, session)
    header_version = request.headers.get("MCP-Protocol-Version")
    if header_version and header_version not in SUPPORTED_PROTOCOL_VERSIONS:
        return _reply(
            request,
            _error(
                getattr(message, "id", None),
                mt.INVALID_REQUEST,
                f"Unsupported MCP-Protocol-Version {header_version}",
            ),
            status=400,
        )
    if not isinstance(message, mt.JSONRPCRequest):
        return web.Response(status=202)  # notifications and responses need no answer
    return _reply(request, await _dispatch(request, client, message))


async def _dispatch(request: web.Request, client: Client, message: mt.JSONRPCRequest) -> dict[str, Any]:
    if message.method == "ping":
        return _result(message.id, mt.EmptyResult())
    if message.method == "tools/list":
        tools = [
            mt.Tool(name=t.name, description=t.description, inputSchema=t.schema()) for t in TOOLS.values()
        ]
        return _result(message.id, mt.ListToolsResult(tools=tools))
    if message.method == "tools/call":
        try:
            params = mt.CallToolRequestParams.model_validate(message.params or {})
        except ValidationError:
            return _error(message.id, mt.INVALID_PARAMS, "Invalid params: tools/call needs a tool name")
        tool = TOOLS.get(params.name)
        if tool is None:
            return _error(message.id, mt.INVALID_PARAMS, f"Unknown tool: {params.name}")
        return _result(message.id, await _call(request, client, tool, params.arguments or {}))
    return _error(message.id, mt.METHOD_NOT_FOUND, f"Method not found: {message.method}")


async def _call(
    request: web.Request, client: Client, tool: Tool, arguments: dict[str, Any]
) -> mt.CallToolResult:
    """Run one tool; every failure is a tool result with isError, never a transport error."""
    bad = nul_field(arguments)
    if bad:
        return _tool_error("invalid_arguments", f"{bad}: NUL characters are not allowed")
    try:
        args = tool.args.model_validate(arguments)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors()[:5]
        )
        return _tool_error("invalid_arguments", problems)
    if tool.scope not in client.scopes:
        return _tool_error("insufficient_scope", f"this key lacks the scope {tool.scope}", status=403)
    try:
        result = await tool.handler(runtime(request), client.caller, args)
    except DomainError as exc:
        return _tool_error(exc.code, exc.detail, status=exc.status)
    return mt.CallToolResult(
        content=[mt.TextContent(type="text", text=json.dumps(result, default=str))],
        structuredContent=result,
        isError=False,
    )


def _tool_error(code: str, detail: str, *, status: int = 400) -> mt.CallToolResult:
    body = {"error": code, "detail": detail, "status": status}
    return mt.CallToolResult(
        content=[mt.TextContent(type="text", text=json.dumps(body))], structuredContent=body, isError=True
    )


async def delete(request: web.Request) -> web.Response:
    who = (await _client(request)).caller
    session_id = request.headers.get("Mcp-Session-Id", "")
    async with runtime(request).db.transaction() as unit:
        ended = await mcp_sessions.end(unit, session_id, who.key_id)
    if not ended:
        raise web.HTTPNotFound(text="no such MCP session")
    return web.Response(status=204)


async def get(request: web.Request) -> web.Response:
    raise web.HTTPMethodNotAllowed(
        "GET", ["POST", "DELETE"], text="this server does not push messages; POST requests"
    )


async def discovery(request: web.Request) -> web.Response:
    base = f"{request.scheme}://{request.host}"
    return web.json_response(
        {
            "name": SERVER_NAME,
            "version": SERVER_VERSION,
            "description": "Concord document collaboration tools for AI agents.",
            "endpoint": f"{base}/mcp",
            "transport": "streamable-http",
            "protocolVersions": list(SUPPORTED_PROTOCOL_VERSIONS),
            "auth": {
                "type": "apiKey",
                "header": "X-Api-Key",
                "alsoAccepted": "Authorization: Bearer <key>",
                "keyPrefix": servicekeys.PREFIX,
            },
            "tools": [
                {"name": t.name, "description": t.description, "scope": t.scope, "inputSchema": t.schema()}
                for t in TOOLS.values()
            ],
        }
    )


def add_routes(app: web.Application) -> None:
    app.router.add_post("/mcp", post)
    app.router.add_delete("/mcp", delete)
    app.router.add_get("/mcp", get)
    app.router.add_get("/.well-known/mcp.json", discovery)
