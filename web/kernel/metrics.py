"""`GET /metrics` on both apps: Prometheus's text format (infra/metrics.py).

Not an API operation (not in the OpenAPI documents, no rate limit, no agent key). Anyone who reaches the port
may scrape unless `CONCORD_METRICS_TOKEN` is set, then only `Authorization: Bearer <token>`: operators keep
/metrics off the public internet either way (deploy/README.md)."""

from __future__ import annotations

from aiohttp import web

from infra.metrics import CONTENT_TYPE, UNAUTHORIZED, authorized, exposition, process_metrics
from web.kernel import errors
from web.kernel.appkeys import APP_NAME, ERROR_STYLE, RATE_LIMITS
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
    timeout = rt.settings.redis_timeout_seconds
    if RATE_LIMITS in request.app:  # what the app's rate limits do now, not as of their last request
        await refresh_rate_limits(request.app, timeout)
    body = await exposition(process_metrics(), rt.db, rt.broker, timeout)
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})


async def refresh_rate_limits(app: web.Application, timeout: float) -> str:
    """Ask the app's rate limits where they count now, record it in the fallback gauge, answer their state."""
    limits = app[RATE_LIMITS]
    state = await limits.refresh(timeout)
    process_metrics().rate_limits(app.get(APP_NAME, "other"), limits.falling_back)
    return state


def add_routes(app: web.Application) -> None:
    app.router.add_get(PATH, metrics)
