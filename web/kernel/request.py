"""Reading a request: the process runtime and the app's web services, the client's address and country,
the presented API key and the domain Context."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Hashable
from contextlib import AbstractAsyncContextManager
from typing import Any

from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from domain.kernel.context import Actor, Context
from runtime.process import Runtime
from web.kernel.access import ACCESS, Anonymous
from web.kernel.appkeys import RATE_LIMITS, READ_CACHE, REQUEST_ID, RUNTIME
from web.kernel.ratelimit import RateLimits
from web.kernel.replies import SHAPE

_COUNTRY = re.compile(r"^[A-Z]{2}$")


def runtime(request: web.Request) -> Runtime:
    return request.app[RUNTIME]


def rate_limits(request: web.Request) -> RateLimits:
    return request.app[RATE_LIMITS]


def client_address(request: web.Request, app: web.Application | None = None) -> str:
    """The client's address; `app` for a request answered before routing (web/kernel/middleware.py's hot
    reads), which has no `request.app` yet."""
    header = (app if app is not None else request.app)[RUNTIME].settings.trusted_proxy_header
    if header and request.headers.get(header):
        # The trusted proxy appends the address it saw; earlier entries are client-supplied.
        return request.headers[header].split(",")[-1].strip()
    return request.remote or "unknown"


def public_url(request: web.Request, path: str) -> str:
    """An absolute URL under the operator's public address when one is configured, else the path."""
    base = runtime(request).settings.public_url
    return f"{base.rstrip('/')}{path}" if base else path


def country(request: web.Request) -> str | None:
    header = runtime(request).settings.country_header
    value = request.headers.get(header, "").strip().upper() if header else ""
    return value if _COUNTRY.match(value) and value != "XX" else None


def presented_key(request: web.Request, *, extra_headers: tuple[str, ...] = ()) -> str | None:
    """X-Api-Key wins over Authorization: Bearer (PACT rule); then any area-specific header."""
    key = request.headers.get("X-Api-Key")
    if key:
        return key.strip()
    auth = request.headers.get("Authorization", "")
    if auth[:7].lower() == "bearer " and auth[7:].strip():
        return auth[7:].strip()
    for header in extra_headers:
        if request.headers.get(header):
            return request.headers[header].strip()
    return None


def guard_session(request: web.Request) -> AbstractAsyncContextManager[AsyncSession]:
    """Where an access guard looks the caller's key up. A write whose body has fully arrived does it in the
    request's own unit of work (its route's `db.transaction()` then adopts it: no transaction of its own
    for the lookup); a read, or a body still streaming in (an upload), in a short read of its own, so no
    connection (nor SQLite's write lock) is held while the client sends."""
    writes = request.method not in ("GET", "HEAD", "OPTIONS")
    arrived = not request.body_exists or request.content.is_eof()
    return runtime(request).db.guard_session(write=writes and arrived)


def context(request: web.Request, actor: Actor | None = None) -> Context:
    return Context(actor=actor, request_id=request[REQUEST_ID], country=country(request))


async def cached_json(
    request: web.Request, key: Hashable, make: Callable[[AsyncConnection], Awaitable[Any]]
) -> web.Response:
    """A JSON response for an anonymous read, served from the app's read cache. `make` reads the answer on a
    bare connection (Database.read_connection: Core statements, no ORM session). The entry is the answer's
    bytes, serialised through the operation's response model once, when the cache fills (never per request).
    The request's target is learnt as this entry's (`ReadCache.learn`): while the entry is fresh, the next
    GET of the same target is answered with it before routing (web/kernel/middleware.py `serve_hot_reads`)."""
    cache = request.app[READ_CACHE]
    shape = request[SHAPE]  # set by the operation (web/kernel/routing.py Api.handler)

    async def render(conn: AsyncConnection) -> bytes:
        return shape.dump(await make(conn))

    resource = request.match_info.route.resource
    if resource is not None and request.method == "GET" and isinstance(request.get(ACCESS), Anonymous):
        cache.learn(request.raw_path, key, resource.canonical, render)
    body = cache.fresh(key)
    if body is None:
        body = await cache.get(key, render)
    return web.Response(body=body, content_type="application/json")
