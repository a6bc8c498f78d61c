"""Middlewares shared by both apps: request ids, error rendering and the no-500-with-a-trace rule, and per
request an access log line and the request metrics (runtime/metrics.py; scrapes of /metrics are not counted
there, they are no use of the API)."""

from __future__ import annotations

import asyncio
import logging
import time

from aiohttp import web
from aiohttp.typedefs import Handler

from domain.kernel import db
from domain.kernel.errors import DomainError, RateLimited, Unavailable
from runtime.logs import REQUEST_ID as LOGGED_REQUEST_ID
from runtime.metrics import UNMATCHED, process_metrics
from web.kernel import errors, requestid
from web.kernel.appkeys import APP_NAME, BODY_LIMIT, ERROR_STYLE, REQUEST_ID
from web.kernel.metrics import PATH as METRICS_PATH

log = logging.getLogger("concord.web")
access_log = logging.getLogger("concord.access")


@web.middleware
async def request_context(request: web.Request, handler: Handler) -> web.StreamResponse:
    rid = requestid.of(request.headers.get("X-Request-Id"))
    request[REQUEST_ID] = rid
    token = LOGGED_REQUEST_ID.set(rid)
    started = time.perf_counter()
    status = 500
    try:
        try:
            response = await handler(request)
        except Exception as exc:
            response = _refusal(request, exc, rid)
        response.headers["X-Request-Id"] = rid
        status = response.status
        return response
    except web.HTTPException as exc:  # below 400: a redirect, passed on to aiohttp
        status = exc.status
        raise
    except asyncio.CancelledError:
        status = 499  # the client went away first (nginx's code for it)
        raise
    finally:
        _served(request, status, time.perf_counter() - started, rid)
        LOGGED_REQUEST_ID.reset(token)


def _route(request: web.Request) -> str:
    """The matched route's path template (`/api/pact/{topicId}`), never the raw path: bounded labels, and no
    token of a path (`/share/{token}`) in the logs."""
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else UNMATCHED


def _served(request: web.Request, status: int, seconds: float, rid: str) -> None:
    route = _route(request)
    app = request.app.get(APP_NAME, "other")  # set by web/app.py; a bare app (tests) is "other"
    if route != METRICS_PATH:
        process_metrics().request(app, request.method, route, status, seconds)
    if not access_log.isEnabledFor(logging.INFO):
        return  # the line's fields cost a cached read more than formatting nothing does
    duration_ms = round(seconds * 1000, 2)
    access_log.info(
        "%s %s %d %.1f ms",
        request.method,
        route,
        status,
        duration_ms,
        extra={
            "app": app,
            "method": request.method,
            "route": route,
            "status": status,
            "duration_ms": duration_ms,
            "request_id": rid,
        },
    )


def _refusal(request: web.Request, exc: Exception, rid: str) -> web.StreamResponse:
    """The error response for what the handler raised (a redirect is raised on, to aiohttp)."""
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
