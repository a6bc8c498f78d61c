"""Liveness and readiness, on both apps."""

from __future__ import annotations

import asyncio
import os
from typing import Literal

from aiohttp import web
from pydantic import BaseModel, Field

from web.kernel.ratelimit import describe
from web.kernel.request import rate_limits, runtime
from web.kernel.routing import Routes, json_response
from workers.broker import is_embedded

routes = Routes()


class Health(BaseModel):
    status: Literal["ok"]
    pid: int = Field(description="The web process that answered (several may share the port).")


class Readiness(BaseModel):
    """Also the body of the 503, so that a probe or an operator sees which dependency is down."""

    status: Literal["ready", "unavailable"]
    database: Literal["ok", "unreachable"]
    broker: str = Field(
        description="`in-process`, `redis`, or `redis unreachable: <reason>` (then the status is 503)"
    )
    rateLimits: str = Field(
        description="Where rate limits count now: `redis`, `shared file` (the machine's web processes), "
        "`process memory`, or one of the last two followed by `(redis unreachable: <reason>)` while Redis "
        "cannot answer"
    )


@routes.route(
    "GET",
    "/healthz",
    summary="The process is up",
    tags=["Health"],
    response=Health,
)
async def healthz(request: web.Request) -> web.Response:
    return json_response({"status": "ok", "pid": os.getpid()})


@routes.route(
    "GET",
    "/readyz",
    summary="Database and broker reachable",
    tags=["Health"],
    response=Readiness,
    errors={503: "A dependency is unreachable"},
)
async def readyz(request: web.Request) -> web.Response:
    rt = runtime(request)
    db_ok = await rt.db.ping()
    if is_embedded(rt.broker):
        broker, broker_ok = "in-process", True
    else:
        problem = await _redis_problem(rt.broker, rt.settings.redis_timeout_seconds)
        broker, broker_ok = ("redis", True) if problem is None else (f"redis unreachable: {problem}", False)
    body = {
        "status": "ready" if db_ok and broker_ok else "unavailable",
        "database": "ok" if db_ok else "unreachable",
        "broker": broker,
        "rateLimits": rate_limits(request).state,
    }
    return json_response(body, status=200 if db_ok and broker_ok else 503)


async def _redis_problem(broker: object, timeout: float) -> str | None:
    """Why the broker's Redis does not answer a PING within `timeout`, or None when it does."""
    client = broker.client  # type: ignore[attr-defined]
    try:
        await asyncio.wait_for(asyncio.to_thread(client.ping), timeout=timeout + 1)
    except TimeoutError:
        return f"no answer within {timeout + 1:g} s"
    except Exception as exc:
        return describe(exc)
    return None
