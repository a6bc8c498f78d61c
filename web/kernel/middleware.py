"""Middlewares shared by both apps: request ids, error rendering and the no-500-with-a-trace rule."""

from __future__ import annotations

import logging
import re
import uuid

from aiohttp import web
from aiohttp.typedefs import Handler

from domain.kernel import db
from domain.kernel.errors import DomainError, RateLimited, Unavailable
from web.kernel import errors
from web.kernel.appkeys import BODY_LIMIT, ERROR_STYLE, REQUEST_ID

log = logging.getLogger("concord.web")
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


@web.middleware
async def request_context(request: web.Request, handler: Handler) -> web.StreamResponse:
    given = request.headers.get("X-Request-Id", "")
    rid = given if _REQUEST_ID.match(given) else str(uuid.uuid4())
    request[REQUEST_ID] = rid
    style = request.app[ERROR_STYLE]
    try:
        response = await handler(request)
    except DomainError as exc:
        headers = None
        if isinstance(exc, RateLimited | Unavailable):
            headers = {"Retry-After": str(exc.retry_after)}
        response = errors.render(style, exc.status, exc.code, exc.detail, extra=exc.extra, headers=headers)
    except web.HTTPException as exc:
        if exc.status < 400:
            exc.headers["X-Request-Id"] = rid
            raise
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
    except Exception as exc:
        if (busy := db.unavailable(exc)) is not None:
            log.warning(
                "database unavailable on %s %s (request %s): %s", request.method, request.path, rid, exc
            )
            headers = {"Retry-After": str(busy.retry_after)}
            response = errors.render(style, busy.status, busy.code, busy.detail, headers=headers)
        else:
            log.exception("unhandled error on %s %s (request %s)", request.method, request.path, rid)
            response = errors.render(style, 500, "internal_error", f"internal error; quote request id {rid}")
    response.headers["X-Request-Id"] = rid
    return response
