"""Middlewares shared by both apps: request ids, error rendering and the no-500-with-a-trace rule, and per
request an access log line and the request metrics (infra/metrics.py; scrapes of /metrics are not counted
there, they are no use of the API).

The hub's hot anonymous reads skip all of it but the bookkeeping (`serve_hot_reads`): a GET whose target
(path and query as sent) the read cache has learnt, and whose entry is fresh, is answered before routing with
the entry's bytes, its request id and the same metrics and access line; everything else is routed as usual."""

from __future__ import annotations

import asyncio
import logging
import time

from aiohttp import web
from aiohttp.typedefs import Handler

from domain.kernel import db
from domain.kernel.errors import DomainError, RateLimited, Unavailable
from infra.logs import REQUEST_ID as LOGGED_REQUEST_ID
from infra.metrics import UNMATCHED, process_metrics
from web.kernel import errors, requestid
from web.kernel.appkeys import APP_NAME, BODY_LIMIT, ERROR_STYLE, REQUEST_ID, RUNTIME
from web.kernel.metrics import PATH as METRICS_PATH
from web.kernel.readcache import ReadCache
from web.kernel.request import client_address

log = logging.getLogger("concord.web")
access_log = logging.getLogger("concord.access")
USER_AGENT_CHARS = 300  # an access line keeps this much of a client's User-Agent
CLIENT_LEFT = 499  # the status counted and logged for a request whose client went away (nginx's code for it)


@web.middleware
async def request_context(request: web.Request, handler: Handler) -> web.StreamResponse:
    rid = requestid.of(request.headers.get("X-Request-Id"))
    request[REQUEST_ID] = rid
    token = LOGGED_REQUEST_ID.set(rid)
    started = time.perf_counter()
    status = 500
    sent: web.StreamResponse | None = None
    try:
        try:
            response = await handler(request)
        except Exception as exc:
            response = _refusal(request, exc, rid)
        response.headers["X-Request-Id"] = rid
        status, sent = response.status, response
        return response
    except web.HTTPException as exc:  # below 400: a redirect, passed on to aiohttp
        status, sent = exc.status, exc
        raise
    except asyncio.CancelledError:
        status = CLIENT_LEFT
        raise
    finally:
        _served(request.app, request, _route(request), status, time.perf_counter() - started, rid, sent)
        LOGGED_REQUEST_ID.reset(token)


def serve_hot_reads(app: web.Application, cache: ReadCache) -> None:
    """Answer a GET of a target `cache` has learnt (web/kernel/request.py `cached_json`) with its fresh entry
    before aiohttp routes the request and runs the middlewares: the answer the route would give (the entry's
    bytes, `X-Request-Id`), counted and logged alike, for a fraction of the CPU. Any other request, or one
    whose entry is not fresh, is handled as usual."""
    routed = app._handle

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.method == "GET" and (hit := cache.hot(request.raw_path)) is not None:
            started = time.perf_counter()
            rid = requestid.of(request.headers.get("X-Request-Id"))
            response = web.Response(body=hit[0], content_type="application/json")
            response.headers["X-Request-Id"] = rid
            _served(app, request, hit[1], 200, time.perf_counter() - started, rid, response)
            return response
        return await routed(request)

    app._handle = handle  # type: ignore[method-assign]  # the handler aiohttp's server calls per request


def _route(request: web.Request) -> str:
    """The matched route's path template (`/api/pact/{topicId}`), never the raw path: bounded labels, and no
    token of a path (`/share/{token}`) in the logs."""
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else UNMATCHED


def _served(
    web_app: web.Application,
    request: web.Request,
    route: str,
    status: int,
    seconds: float,
    rid: str,
    response: web.StreamResponse | None,
) -> None:
    app = web_app.get(APP_NAME, "other")  # set by web/app.py; a bare app (tests) is "other"
    if route != METRICS_PATH:
        process_metrics().request(app, request.method, route, status, seconds)
    if not access_log.isEnabledFor(logging.INFO):
        return  # the line's fields cost a cached read more than formatting nothing does
    duration_ms = round(seconds * 1000, 2)
    client = client_address(request, web_app) if RUNTIME in web_app else request.remote or "unknown"
    agent = request.headers.get("User-Agent", "")[:USER_AGENT_CHARS]
    size = _size(response)
    # The text line shows what the client sent through repr(): quoted and escaped, so that it cannot pass for
    # another field or line.
    access_log.info(
        "%s %s %d %.1f ms %s B from %s %r",
        request.method,
        route,
        status,
        duration_ms,
        "-" if size is None else size,
        client,
        agent,
        extra={
            "app": app,
            "method": request.method,
            "route": route,
            "status": status,
            "duration_ms": duration_ms,
            "request_id": rid,
            "client": client,
            "user_agent": agent,
            "bytes": size,
        },
    )


def _size(response: web.StreamResponse | None) -> int | None:
    """The bytes of the response: its body's length when the handler hands over a whole body (aiohttp sends it
    after this middleware), or all the handler wrote for a response it streamed itself (MCP's); None when not
    known beforehand (a chunked body) or when there was no response (the client went away)."""
    if response is None:
        return None
    if response.prepared:
        return response.body_length
    return response.content_length


def _client_left(request: web.Request, exc: Exception) -> bool:
    """The handler failed writing to a client that had closed its connection (an event stream's reader gone
    before its headers were sent, a download cancelled): the client's doing, not an error of the server. A
    connection error with the client still there (an outbound call's) is an error as any other."""
    transport = request.transport
    return isinstance(exc, ConnectionError) and (transport is None or transport.is_closing())


def _refusal(request: web.Request, exc: Exception, rid: str) -> web.StreamResponse:
    """The error response for what the handler raised (a redirect is raised on, to aiohttp)."""
    if _client_left(request, exc):
        # Nothing can reach the client: aiohttp drops this answer, the access line and metrics say 499.
        return web.Response(status=CLIENT_LEFT)
    style = request.app[ERROR_STYLE]
    if isinstance(exc, DomainError):
        headers = None
        if isinstance(exc, RateLimited | Unavailable):
            headers = {"Retry-After": str(exc.retry_after)}
        return errors.render(style, exc.status, exc.code, exc.detail, extra=exc.extra, headers=headers)
    if isinstance(exc, web.HTTPException):
        if exc.status < 400:
            exc.headers["X-Request-Id"] = rid
            raise exc
        detail = exc.text if exc.text and not exc.text.startswith(f"{exc.status}:") else exc.reason
        if exc.status == 413:
            detail = f"request body is larger than the {request.app[BODY_LIMIT]} bytes allowed"
        elif exc.status == 404:
            detail = f"no route for {request.method} {request.path}"
        elif exc.status == 405:
            detail = f"{request.method} is not allowed on {request.path}"
        response = errors.render(style, exc.status, errors.code_for(exc.status), detail)
        if "Allow" in exc.headers:
            response.headers["Allow"] = exc.headers["Allow"]
        return response
    if (busy := db.unavailable(exc)) is not None:
        log.warning("database unavailable on %s %s (request %s): %s", request.method, request.path, rid, exc)
        headers = {"Retry-After": str(busy.retry_after)}
        return errors.render(style, busy.status, busy.code, busy.detail, headers=headers)
    log.exception("unhandled error on %s %s (request %s)", request.method, request.path, rid, exc_info=exc)
    return errors.render(style, 500, "internal_error", f"internal error; quote request id {rid}")
