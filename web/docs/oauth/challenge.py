"""The Bearer challenge of the document API (RFC 6750 §3, RFC 9728 §5.1): a 401 from /mcp or from an
operation that takes a service key or an access token names where the protected resource metadata is, so
an MCP client can find the authorization server and sign a person in; `error="invalid_token"` when a
credential was given but refused. A 403 for a missing scope says `error="insufficient_scope"` and the
scope (a client may ask the person for more)."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from web.docs.auth import MISSING_SCOPE
from web.docs.oauth import urls
from web.kernel.access import ACCESS, Service


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def challenge(request: web.Request, status: int) -> str | None:
    """The WWW-Authenticate value for a refused request, or None when it needs none."""
    on_mcp = request.path == urls.MCP_PATH
    if not on_mcp and not isinstance(request.get(ACCESS), Service):
        return None
    parts = [f"resource_metadata={_quoted(urls.resource_metadata(request, for_mcp=on_mcp))}"]
    if status == 401:
        if request.headers.get("Authorization") or request.headers.get("X-Api-Key"):
            parts.insert(0, 'error="invalid_token"')
    elif status == 403 and MISSING_SCOPE in request:
        parts[:0] = ['error="insufficient_scope"', f"scope={_quoted(request[MISSING_SCOPE])}"]
    else:
        return None
    return "Bearer " + ", ".join(parts)


@web.middleware
async def bearer_challenge(request: web.Request, handler: Handler) -> web.StreamResponse:
    response = await handler(request)
    if response.status in (401, 403):
        found = challenge(request, response.status)
        if found is not None:
            response.headers["WWW-Authenticate"] = found
    return response
