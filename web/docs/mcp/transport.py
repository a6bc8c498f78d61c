"""The /mcp endpoint on aiohttp: the DNS-rebinding guard (Origin, and Host on a loopback bind), then the
service key (401 before anything else runs), then the SDK's stateless streamable HTTP manager through the
ASGI bridge. Also the discovery document at /.well-known/mcp.json and the app's MCP lifecycle (the
manager's task group and the document watcher run while the app does)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator

import mcp_types as mt
from aiohttp import web
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from domain.documents import servicekeys
from domain.kernel.tasks import cancel_and_wait
from web.docs.auth import service_principal
from web.docs.mcp import bridge, origin
from web.docs.mcp.prompts import PROMPTS
from web.docs.mcp.server import SCOPE_KEY, SERVER_NAME, SERVER_VERSION, Call, McpService, build, listed_tools
from web.docs.mcp.tools import TOOLS
from web.docs.oauth import urls as oauth_urls
from web.kernel.appkeys import REQUEST_ID, RUNTIME
from web.kernel.request import runtime

MCP = web.AppKey("mcp_service", McpService)
# The SDK's stateless transport logs "Terminating session: None" at INFO after every request.
logging.getLogger("mcp.server.streamable_http").setLevel(logging.WARNING)
PROTOCOL_VERSIONS = [*MODERN_PROTOCOL_VERSIONS, *reversed(HANDSHAKE_PROTOCOL_VERSIONS)]


def _forbidden(reason: str) -> web.Response:
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
    return await bridge.serve(
        request.app[MCP].manager.handle_request,
        request,
        body,
        scope_extra={SCOPE_KEY: Call(rt, found.caller, found.scopes)},
        headers={"X-Request-Id": request[REQUEST_ID]},
        status_of=answer_status,
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
            "protocolVersions": PROTOCOL_VERSIONS,
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


async def lifecycle(app: web.Application) -> AsyncIterator[None]:
    """Run the SDK manager's task group and the document watcher in a task of their own while the app
    serves (an anyio task group has to end in the task that started it)."""
    service = app[MCP]
    ready, stop = asyncio.Event(), asyncio.Event()

    async def run() -> None:
        async with service.manager.run():
            watcher = asyncio.create_task(service.watcher.run())
            ready.set()
            try:
                await stop.wait()
            finally:
                await cancel_and_wait(watcher)

    task = asyncio.create_task(run())
    started = asyncio.create_task(ready.wait())
    await asyncio.wait({task, started}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        started.cancel()
        task.result()  # raises what stopped it
    try:
        yield
    finally:
        service.listen.close()  # open listen streams end with their final result
        stop.set()
        await task


async def end_listen_streams(app: web.Application) -> None:
    """On shutdown, before open connections are waited for: each listen stream ends with its final result
    (the client listens again, on another process), rather than holding the stop until it times out."""
    app[MCP].listen.close()


def add_routes(app: web.Application) -> None:
    app[MCP] = build(app[RUNTIME])
    # POST only: served statelessly there is no standing stream to GET and no session to DELETE, so every
    # other method gets the app's 405 with Allow: POST.
    app.router.add_post("/mcp", endpoint)
    app.router.add_get("/.well-known/mcp.json", discovery)
    app.on_shutdown.append(end_listen_streams)
    app.cleanup_ctx.append(lifecycle)
