"""/metrics of a worker machine or pod, where no web process runs to show the workers' samples:

    dramatiq workers.main --fork-function workers.exposition:serve

Dramatiq runs this function in a process of its own beside the worker processes; it serves the samples every
process wrote to `CONCORD_METRICS_DIR` (job outcomes and durations) on `CONCORD_HOST`:`CONCORD_METRICS_PORT`,
with `CONCORD_METRICS_TOKEN` as on the web apps. Queue depth and outbox lag come from the web processes."""

from __future__ import annotations

import logging

from aiohttp import web

from domain.kernel.settings import get_settings
from infra import logs, metrics_dir

log = logging.getLogger("concord.workers")


def serve() -> int:
    settings = get_settings()
    logs.configure(settings)
    directory = metrics_dir.configure(settings)  # before prometheus_client is imported
    if directory is None:
        log.error(
            "workers.exposition:serve needs CONCORD_METRICS_DIR: the workers' samples are written there"
        )
        return 2
    from infra.metrics import CONTENT_TYPE, UNAUTHORIZED, authorized, process_metrics

    async def metrics(request: web.Request) -> web.Response:
        if not authorized(settings.metrics_token, request.headers.get("Authorization", "")):
            return web.json_response({"error": "unauthorized", "detail": UNAUTHORIZED}, status=401)
        return web.Response(body=process_metrics().samples(), headers={"Content-Type": CONTENT_TYPE})

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    log.info("worker metrics on http://%s:%d/metrics", settings.host, settings.metrics_port)
    web.run_app(app, host=settings.host, port=settings.metrics_port, print=None, access_log=None)
    return 0
