"""`GET /metrics` on both apps: Prometheus's text format (runtime/metrics.py).

Not an API operation (not in the OpenAPI documents, no rate limit, no agent key). Anyone who reaches the port
may scrape unless `CONCORD_METRICS_TOKEN` is set, then only `Authorization: Bearer <token>`: operators keep
/metrics off the public internet either way (deploy/README.md)."""

from __future__ import annotations

from aiohttp import web

from runtime.metrics import CONTENT_TYPE, UNAUTHORIZED, authorized, exposition, process_metrics
from web.kernel import errors
from web.kernel.appkeys import ERROR_STYLE
from web.kernel.request import runtime

PATH = "/metrics"


async def metrics(request: web.Request) -> web.Response:
    rt = runtime(request)
    if not authorized(rt.settings.metrics_token, request.headers.get("Authorization", "")):
        return errors.render(
            request.app[ERROR_STYLE],
            401,
            "unauthorized",
            UNAUTHORIZED,
            headers={"WWW-Authenticate": 'Bearer realm="metrics"'},
        )
    body = await exposition(process_metrics(), rt.db, rt.broker)
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})


def add_routes(app: web.Application) -> None:
    app.router.add_get(PATH, metrics)
