"""The /mcp endpoint on aiohttp: the DNS-rebinding guard (Origin, and Host on a loopback bind), then the
service key (401 before anything else runs), then the SDK's stateless streamable HTTP manager through the
ASGI bridge. Also the discovery document at /.well-known/mcp.json and the app's MCP lifecycle.

The MCP server (the `mcp` SDK, ~0.4 s of CPU to import) is built, and its manager's task group and document
watcher started, at the first authenticated MCP request, not with the app: a process that never serves MCP
(a worker, the scheduler, a CLI command, a web process nobody asks for MCP) never loads the SDK. They run
until the app stops."""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aiohttp import web

from domain.documents import servicekeys
from domain.kernel.tasks import cancel_and_wait
from runtime.process import Runtime
from web.docs.auth import service_principal
from web.docs.mcp import bridge, origin
from web.docs.oauth import urls as oauth_urls
from web.kernel.appkeys import REQUEST_ID, RUNTIME
from web.kernel.request import runtime

if TYPE_CHECKING:  # the SDK loads at the first MCP request (start-up cost)
    from web.docs.mcp.server import McpService


@dataclass
class McpHolder:
    """One app's MCP service once the first MCP request has built and started it (`service`)."""

    rt: Runtime
    service: McpService | None = None
    # The context the app started in: the manager's task runs in it, not in the first request's (whose
    # request id and database unit are that request's own).
    context: contextvars.Context | None = None
    task: asyncio.Task[None] | None = None
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


MCP = web.AppKey("mcp_service", McpHolder)
# The SDK's stateless transport logs "Terminating session: None" at INFO after every request.
logging.getLogger("mcp.server.streamable_http").setLevel(logging.WARNING)


def _forbidden(reason: str) -> web.Response:
    # Deferred: mcp_types (~0.2 s of CPU at start-up) loads when an MCP request needs it.
    import mcp_types as mt

    body = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": mt.INVALID_REQUEST, "message": f"Forbidden: {reason}"},
    }
    return web.Response(status=403, text=json.dumps(body), content_type="application/json")


def answer_status(status: int, body: bytes) -> int:
    """The HTTP status of a JSON answer. The SDK sends every JSON-RPC error -32602 or -32600 with a 400 at
    2026-07-28, also those our handlers raise to answer a well-formed request (an unknown tool, a resource
    refused: their `data` names Concord's `error`, server.answer_error). Those are protocol-level answers and
    go in a 200, as at the handshake revisions, so the access log and the request metrics do not count them as
    malformed requests. The transport's own refusals (malformed JSON-RPC, a missing envelope, a header
    mismatch, an unsupported version: 400; an unknown method: 404) keep the status the spec asks for."""
    if status != 400:
        return status
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return status
    data = error.get("data") if isinstance(error, dict) else None
    return 200 if isinstance(data, dict) and isinstance(data.get("error"), str) else status


async def endpoint(request: web.Request) -> web.StreamResponse:
    rt = runtime(request)
    refused = origin.refusal(
        origin=request.headers.get("Origin"),
        host=request.host,
        bind_host=rt.settings.host,
        allowed=rt.settings.mcp_allowed_origins,
    )
    if refused:
        return _forbidden(refused)
    found = await service_principal(request)  # 401 problem+json without a valid key or token
    body = await request.read()
    service = await started(request.app)
    from web.docs.mcp.server import SCOPE_KEY, Call  # deferred with the SDK (start-up cost): loaded by now

    return await bridge.serve(
        service.manager.handle_request,
        request,
        body,
        scope_extra={SCOPE_KEY: Call(rt, found.caller, found.scopes)},
        headers={"X-Request-Id": request[REQUEST_ID]},
        status_of=answer_status,
    )


async def discovery(request: web.Request) -> web.Response:
    # Deferred: the SDK's types (~0.2 s of CPU at start-up) load when the document is first asked for.
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    from web.docs.mcp.prompts import PROMPTS
    from web.docs.mcp.server import SERVER_NAME, SERVER_VERSION, listed_tools
    from web.docs.mcp.tools import TOOLS

    base = f"{request.scheme}://{request.host}"
    return web.json_response(
        {
            "name": SERVER_NAME,
            "version": SERVER_VERSION,
            "description": "Concord document collaboration tools for AI agents.",
            "endpoint": f"{base}/mcp",
            "transport": "streamable-http",
            "protocolVersions": [*MODERN_PROTOCOL_VERSIONS, *reversed(HANDSHAKE_PROTOCOL_VERSIONS)],
            "stateless": True,
            "auth": {
                "type": "apiKey",
                "header": "X-Api-Key",
                "alsoAccepted": "Authorization: Bearer <key>",
                "keyPrefix": servicekeys.PREFIX,
                # Or a person signs in with OAuth 2.1 (the MCP authorization spec): start from here.
                "oauth": {
                    "protectedResourceMetadata": oauth_urls.resource_metadata(request),
                    "authorizationServer": oauth_urls.issuer(request),
                },
            },
            "tools": [
                {
                    **tool.model_dump(mode="json", by_alias=True, exclude_none=True),
                    "scope": TOOLS[tool.name].scope,
                }
                for tool in listed_tools()
            ],
            "resourceTemplates": [
                "concord://documents/{documentId}",
                "concord://documents/{documentId}/sections/{sectionId}",
            ],
            "prompts": list(PROMPTS),
        }
    )


async def started(app: web.Application) -> McpService:
    """The app's MCP service, built and started by the first call (`_start`)."""
    held = app[MCP]
    if held.service is not None:
        return held.service
    # Shielded: a request cancelled meanwhile (its client gone) leaves the start to finish for the next.
    return await asyncio.shield(_start(held))


async def _start(held: McpHolder) -> McpService:
    """Build the service and run the SDK manager's task group and the document watcher in a task of their
    own (an anyio task group has to end in the task that started it), once: the lock keeps others waiting."""
    async with held.lock:
        if held.service is not None:
            return held.service
        # Deferred: the `mcp` SDK costs ~0.4 s of CPU to import; only a process that serves MCP pays it.
        from web.docs.mcp.server import build

        service = build(held.rt)
        ready = asyncio.Event()

        async def run() -> None:
            async with service.manager.run():
                watcher = asyncio.create_task(service.watcher.run())
                ready.set()
                try:
                    await held.stop.wait()
                finally:
                    await cancel_and_wait(watcher)

        task = asyncio.create_task(run(), context=held.context)
        waiting = asyncio.create_task(ready.wait())
        await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            waiting.cancel()
            task.result()  # raises what stopped it
        held.service, held.task = service, task
        return service


async def lifecycle(app: web.Application) -> AsyncIterator[None]:
    """Keeps the context the app starts in (for the MCP service's task), and stops the service, if an MCP
    request started it, when the app stops."""
    held = app[MCP]
    held.context = contextvars.copy_context()
    try:
        yield
    finally:
        if held.service is not None and held.task is not None:
            held.service.listen.close()  # open listen streams end with their final result
            held.stop.set()
            await held.task


async def end_listen_streams(app: web.Application) -> None:
    """On shutdown, before open connections are waited for: each listen stream ends with its final result
    (the client listens again, on another process), rather than holding the stop until it times out."""
    service = app[MCP].service
    if service is not None:
        service.listen.close()


def add_routes(app: web.Application) -> None:
    app[MCP] = McpHolder(app[RUNTIME])
    # POST only: served statelessly there is no standing stream to GET and no session to DELETE, so every
    # other method gets the app's 405 with Allow: POST.
    app.router.add_post("/mcp", endpoint)
    app.router.add_get("/.well-known/mcp.json", discovery)
    app.on_shutdown.append(end_listen_streams)
    app.cleanup_ctx.append(lifecycle)
