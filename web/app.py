"""The two aiohttp applications and their shared middleware stack."""

from __future__ import annotations

from aiohttp import web

from web.health import add_health
from web.keys import BODY_LIMIT, ERROR_STYLE, RUNTIME
from web.middleware import request_context
from web.routing import Api, json_response
from web.runtime import Runtime


def _base_app(rt: Runtime, api: Api, style: str, body_limit: int) -> web.Application:
    app = web.Application(middlewares=[request_context], client_max_size=body_limit)
    app[RUNTIME] = rt
    app[ERROR_STYLE] = style
    app[BODY_LIMIT] = body_limit
    api.add_routes(app)
    spec = api.openapi()

    async def openapi(_request: web.Request) -> web.Response:
        return json_response(spec)

    app.router.add_get("/openapi.json", openapi)
    return app


def create_hub_app(rt: Runtime) -> web.Application:
    import web.hub.axiom_routes  # noqa: F401 - Axiom routes
    from web.hub import audit, collaboration, hub, proposals, registration, topics, voting, wallet  # noqa: F401
    from web.hub import market as market_routes  # noqa: F401 - market routes
    from web.hub.api import api

    if not any(op.path == "/healthz" for op in api.operations):
        add_health(api)
    return _base_app(rt, api, "hub", rt.settings.max_body_bytes)


def create_docs_app(rt: Runtime) -> web.Application:
    from web.docs import mcp as mcp_server
    from web.docs import routes  # noqa: F401 - document API routes
    from web.docs.api import api

    if not any(op.path == "/healthz" for op in api.operations):
        add_health(api)
    app = _base_app(rt, api, "problem", rt.settings.max_upload_bytes)
    mcp_server.add_routes(app)
    return app
