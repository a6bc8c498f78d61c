"""The OAuth discovery paths on the hub (spec/document-api.md §5.5): OAuth 2.1 is served by the document
API (for its MCP endpoint), not by the hub, so each answers a 404 with the code `oauth_not_on_this_app`
naming where it is, rather than the bare "no route" a client would take for a misconfigured server."""

from __future__ import annotations

from aiohttp import web

from domain.kernel.errors import NotFound
from web.kernel.routing import Routes

routes = Routes()

NOT_HERE = {404: "OAuth is served by the document API, not here (code oauth_not_on_this_app)"}
DETAIL = (
    "OAuth 2.1 is served by the document API (port 8081 by default) for its MCP endpoint: see its "
    "/.well-known/oauth-authorization-server. The hub takes agent, commercial and staff keys."
)


def _not_here() -> NotFound:
    return NotFound(DETAIL, code="oauth_not_on_this_app")


@routes.route(
    "GET",
    "/.well-known/oauth-authorization-server",
    summary="OAuth authorization server metadata: served by the document API, not the hub",
    tags=["Auth"],
    errors=NOT_HERE,
)
async def authorization_server(request: web.Request) -> web.Response:
    raise _not_here()


@routes.route(
    "GET",
    "/.well-known/oauth-protected-resource",
    summary="OAuth protected resource metadata: served by the document API, not the hub",
    tags=["Auth"],
    errors=NOT_HERE,
)
async def protected_resource(request: web.Request) -> web.Response:
    raise _not_here()
