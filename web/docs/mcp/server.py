"""The MCP server of the document API, built on the `mcp` SDK's low-level `Server`: tools, documents as
resources (with change notifications on `subscriptions/listen`), prompts, completion, logging.

The SDK's streamable HTTP manager serves it statelessly: protocol 2026-07-28 (each request carries its own
version and capabilities, no session) and the initialize-handshake revisions (2025-11-25, 2025-06-18,
2025-03-26, 2024-11-05: `initialize` is answered, but no session id is issued, so every later request stands
alone). Any web process answers any request. Who calls is decided by the aiohttp handler (transport.py) and
handed in with the ASGI scope; every handler here acts for that caller with its scopes."""

from __future__ import annotations

import functools
import json
import logging
import warnings
from dataclasses import dataclass
from typing import Any

import mcp_types as mt
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from domain.documents.access import Caller
from domain.kernel.errors import DomainError
from runtime.process import Runtime
from web.docs.mcp import prompts, resources
from web.docs.mcp.tools import TOOLS, Tool
from web.kernel.routing import nul_field

SERVER_NAME = "concord-documents"
SERVER_VERSION = "1.0.0"
INSTRUCTIONS = (
    "Concord document collaboration: list and read documents as resources (concord://documents/{id}, "
    ".../sections/{sectionId}), join a document, propose, vote, lock sections and escalate to human "
    "reviewers with the pact_* tools. Prompts review_section and propose_edit gather what those jobs need."
)
SCOPE_KEY = "concord.mcp"  # the ASGI scope entry carrying the Call
log = logging.getLogger("concord.mcp")


@dataclass(frozen=True)
class Call:
    """The authenticated caller of one HTTP request to /mcp."""

    rt: Runtime
    caller: Caller
    scopes: frozenset[str]


Ctx = ServerRequestContext[Any, Any]


def call_of(ctx: Ctx) -> Call:
    request = ctx.request
    found = getattr(request, "scope", {}).get(SCOPE_KEY) if request is not None else None
    if not isinstance(found, Call):
        raise MCPError(mt.INTERNAL_ERROR, "the request reached the MCP server without a caller")
    return found


def answer_error(method: str, code: int, message: str, data: dict[str, Any]) -> MCPError:
    """A JSON-RPC error answering a well-formed request (an unknown tool, a resource refused): logged here
    as the protocol-level answer it is, and sent in a 200 (transport.py), since `data` names Concord's
    `error`."""
    log.info("%s answered with JSON-RPC error %d (%s): %r", method, code, data["error"], message)
    return MCPError(code, message, data=data)


def _refused(method: str, exc: DomainError) -> MCPError:
    """A domain refusal as a JSON-RPC error: invalid params, with the REST code and status as data."""
    return answer_error(method, mt.INVALID_PARAMS, exc.detail, {"error": exc.code, "status": exc.status})


def _need(method: str, call: Call, scope: str) -> None:
    if scope not in call.scopes:
        raise answer_error(
            method,
            mt.INVALID_REQUEST,
            f"this key lacks the scope {scope}",
            {"error": "insufficient_scope", "status": 403, "requiredScope": scope},
        )


# ---- tools --------------------------------------------------------------------------------------------


@functools.cache
def tool_input_schema(name: str) -> dict[str, Any] | None:
    """A tool's input JSON Schema (built once); the SDK also checks `Mcp-Param-*` headers against it."""
    tool = TOOLS.get(name)
    return tool.schema() if tool is not None else None


@functools.cache
def listed_tools() -> tuple[mt.Tool, ...]:
    """Every tool as tools/list gives it (built once): name, titles, description, annotations, input and
    output schemas."""
    return tuple(
        mt.Tool(
            name=t.name,
            title=t.title,
            description=t.description,
            input_schema=dict(tool_input_schema(t.name) or {}),
            output_schema=t.output_schema(),
            annotations=t.annotations(),
        )
        for t in TOOLS.values()
    )


async def list_tools(ctx: Ctx, params: mt.PaginatedRequestParams | None) -> mt.ListToolsResult:
    return mt.ListToolsResult(tools=list(listed_tools()))


async def call_tool(ctx: Ctx, params: mt.CallToolRequestParams) -> mt.CallToolResult:
    """Run one tool: its failures are tool results with isError; an unknown name is a protocol error."""
    call = call_of(ctx)
    tool = TOOLS.get(params.name)
    if tool is None:  # a protocol error, as the spec has it (not a tool result): the model named no tool
        raise answer_error(
            "tools/call", mt.INVALID_PARAMS, f"Unknown tool: {params.name}", {"error": "unknown_tool"}
        )
    result = await _run(call, tool, params.arguments or {})
    if not result.is_error and tool.writes and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        # Delivered only when the request opted in to log messages at this level (2026-07-28 `_meta`);
        # deprecated at that revision but still part of it, so the SDK's warning is not for us.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            sending = ctx.session.send_log_message(
                "info", {"tool": tool.name, "done": True}, logger="concord"
            )
        await sending
    return result


async def _run(call: Call, tool: Tool, arguments: dict[str, Any]) -> mt.CallToolResult:
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
    if tool.scope not in call.scopes:
        return _tool_error("insufficient_scope", f"this key lacks the scope {tool.scope}", status=403)
    try:
        result = await tool.handler(call.rt, call.caller, args)
    except DomainError as exc:
        return _tool_error(exc.code, exc.detail, status=exc.status)
    return mt.CallToolResult(
        content=[mt.TextContent(type="text", text=json.dumps(result, default=str))],
        structured_content=result,
        is_error=False,
    )


def _tool_error(code: str, detail: str, *, status: int = 400) -> mt.CallToolResult:
    body = {"error": code, "detail": detail, "status": status}
    return mt.CallToolResult(
        content=[mt.TextContent(type="text", text=json.dumps(body))], structured_content=body, is_error=True
    )


# ---- resources, prompts, completion, logging -------------------------------------------------------------


async def list_resources(ctx: Ctx, params: mt.PaginatedRequestParams | None) -> mt.ListResourcesResult:
    call = call_of(ctx)
    _need("resources/list", call, "documents:read")
    try:
        return await resources.list_page(call.rt, call.caller, params.cursor if params else None)
    except DomainError as exc:
        raise _refused("resources/list", exc) from None


async def list_resource_templates(
    ctx: Ctx, params: mt.PaginatedRequestParams | None
) -> mt.ListResourceTemplatesResult:
    return mt.ListResourceTemplatesResult(resource_templates=resources.templates())


async def read_resource(ctx: Ctx, params: mt.ReadResourceRequestParams) -> mt.ReadResourceResult:
    call = call_of(ctx)
    _need("resources/read", call, "tap:read")
    try:
        return await resources.read(call.rt, call.caller, params.uri)
    except DomainError as exc:
        raise _refused("resources/read", exc) from None


async def list_prompts(ctx: Ctx, params: mt.PaginatedRequestParams | None) -> mt.ListPromptsResult:
    return mt.ListPromptsResult(prompts=[p.listed() for p in prompts.PROMPTS.values()])


async def get_prompt(ctx: Ctx, params: mt.GetPromptRequestParams) -> mt.GetPromptResult:
    call = call_of(ctx)
    _need("prompts/get", call, "tap:read")
    try:
        return await prompts.get(call.rt, call.caller, params.name, params.arguments or {})
    except DomainError as exc:
        raise _refused("prompts/get", exc) from None


async def complete(ctx: Ctx, params: mt.CompleteRequestParams) -> mt.CompleteResult:
    call = call_of(ctx)
    _need("completion/complete", call, "documents:read")
    ref = params.ref
    known = (
        ref.uri in (resources.DOCUMENT_TEMPLATE, resources.SECTION_TEMPLATE)
        if isinstance(ref, mt.ResourceTemplateReference)
        else ref.name in prompts.PROMPTS
    )
    if not known:
        return mt.CompleteResult(completion=mt.Completion(values=[]))
    context = (params.context.arguments if params.context else None) or {}
    completion = await resources.complete(
        call.rt, call.caller, params.argument.name, params.argument.value, context
    )
    return mt.CompleteResult(completion=completion)


async def set_logging_level(ctx: Ctx, params: mt.SetLevelRequestParams) -> mt.EmptyResult:
    """Accepted (handshake revisions). Served statelessly, no level outlives its request: log messages go
    only to 2026-07-28 requests that ask for them in their own `_meta`."""
    call_of(ctx)
    return mt.EmptyResult()


class Listen:
    """`subscriptions/listen`: checks that the caller may read every resource it subscribes to, has the
    watcher follow them for the stream's life, and lets the SDK's handler serve the stream."""

    def __init__(self, watcher: resources.DocumentWatcher, inner: ListenHandler) -> None:
        self.watcher = watcher
        self.inner = inner

    async def __call__(
        self, ctx: Ctx, params: mt.SubscriptionsListenRequestParams
    ) -> mt.SubscriptionsListenResult:
        call = call_of(ctx)
        uris = resources.uris_of(params)
        if uris:
            _need("subscriptions/listen", call, "tap:read")
        try:
            followed = await resources.check_readable(call.rt, call.caller, uris)
        except DomainError as exc:
            raise _refused("subscriptions/listen", exc) from None
        await self.watcher.follow(call.caller, followed)
        try:
            return await self.inner(ctx, params)
        finally:
            self.watcher.unfollow(followed)


@dataclass
class McpService:
    """One app's MCP server, its stateless HTTP manager and the document watcher behind subscriptions."""

    server: Server[Any]
    manager: StreamableHTTPSessionManager
    watcher: resources.DocumentWatcher
    listen: ListenHandler
    bus: InMemorySubscriptionBus


def build(rt: Runtime) -> McpService:
    bus = InMemorySubscriptionBus()
    watcher = resources.DocumentWatcher(rt.db, bus, lambda: rt.settings.mcp_watch_seconds, rt.live)
    listen = ListenHandler(bus)
    server: Server[Any] = Server(
        SERVER_NAME,
        get_tool_input_schema=tool_input_schema,
        version=SERVER_VERSION,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
        on_subscriptions_listen=Listen(watcher, listen),
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
    )
    # logging/setLevel is deprecated at 2026-07-28 (the constructor argument warns); registered this way it
    # is served to the handshake revisions that still have it.
    server.add_request_handler("logging/setLevel", mt.SetLevelRequestParams, set_logging_level)
    manager = StreamableHTTPSessionManager(
        app=server,
        stateless=True,
        json_response=False,  # JSON unless a request's handler streams (a listen stream, log messages)
        security_settings=None,  # Origin and Host are checked by transport.py before authentication
        max_request_body_size=max(rt.settings.max_upload_bytes * 2, 4 * 1024 * 1024),
    )
    return McpService(server, manager, watcher, listen, bus)
