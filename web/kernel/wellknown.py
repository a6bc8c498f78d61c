"""The reserved OAuth discovery paths (spec/document-api.md §5.5), on both apps: OAuth 2.1 is planned and
not available, so each answers a 404 with the code `oauth_not_available` and the ways in that exist,
rather than the bare "no route" a client would take for a misconfigured server."""

from __future__ import annotations

from aiohttp import web

from domain.kernel.errors import NotFound
from web.kernel.routing import Routes

routes = Routes()

NOT_AVAILABLE = {404: "OAuth is not available yet (code oauth_not_available)"}
DETAIL = (
    "OAuth is not available yet on this server (an OAuth 2.1 server with dynamic client registration is "
    "planned). Use an API key (X-Api-Key or Authorization: Bearer), or sign a person in with "
    "POST /api/auth/login on the document API and send the access token as Authorization: Bearer."
)


def _not_available() -> NotFound:
    return NotFound(DETAIL, code="oauth_not_available", login="/api/auth/login")


@routes.route(
    "GET",
    "/.well-known/oauth-authorization-server",
    summary="Reserved for OAuth authorization server metadata (RFC 8414): not available yet",
    tags=["Auth"],
    errors=NOT_AVAILABLE,
)
async def authorization_server(request: web.Request) -> web.Response:
    raise _not_available()


@routes.route(
    "GET",
    "/.well-known/oauth-protected-resource",
    summary="Reserved for OAuth protected resource metadata (RFC 9728): not available yet",
    tags=["Auth"],
    errors=NOT_AVAILABLE,
)
async def protected_resource(request: web.Request) -> web.Response:
    raise _not_available()
