"""Liveness and readiness, on both apps.

Ready means "can serve": the database answers. Every request needs it, while a broker that does not answer
stops nothing a request does (jobs wait in the outbox and are sent once it is back, rate limits count on the
machine meanwhile), so an unreachable Redis is reported (the body, `concord_broker_up`) without taking the
process out of its load balancer: every web pod shares one Redis, so that made a Redis outage a full one.
"""

from __future__ import annotations

import asyncio
import os
from typing import Literal

import dramatiq
from aiohttp import web
from pydantic import BaseModel, Field

from web.kernel.metrics import refresh_rate_limits
from web.kernel.ratelimit import describe
from web.kernel.replies import Answer, Reply
from web.kernel.request import runtime
from web.kernel.routing import Routes
from workers.broker import is_embedded

routes = Routes()


class Health(BaseModel):
    status: Literal["ok"]
    pid: int = Field(description="The web process that answered (several may share the port).")


class Readiness(BaseModel):
    """Also the body of the 503, so that a probe or an operator sees which dependency is down."""

    status: Literal["ready", "degraded", "unavailable"] = Field(
        description="`ready`: everything answers; `degraded`: the database answers but the broker does not "
        "(still 200: requests are served, jobs wait in the outbox); `unavailable`: the database does not "
        "(503)"
    )
    database: Literal["ok", "unreachable"]
    broker: str = Field(
        description="`in-process`, `redis`, or `redis unreachable: <reason>` (the status is then `degraded`)"
    )
    rateLimits: str = Field(
        description="Where rate limits count at this moment (Redis is asked as readiness answers): `redis`, "
        "`shared file` (the machine's web processes), `process memory`, or one of the last two followed by "
        "`(redis unreachable: <reason>)` while Redis cannot answer"
    )


@routes.route(
    "GET",
    "/healthz",
    summary="The process is up",
    tags=["Health"],
    response=Health,
)
async def healthz(request: web.Request) -> Answer:
    return {"status": "ok", "pid": os.getpid()}


@routes.route(
    "GET",
    "/readyz",
    summary="The process can serve: its database answers (the broker's state is reported, not required)",
    tags=["Health"],
    response=Readiness,
    errors={503: "The database is unreachable"},
)
async def readyz(request: web.Request) -> Answer:
    rt = runtime(request)
    timeout = rt.settings.redis_timeout_seconds
    # Concurrently: a readiness answer waits for the slowest check, not for their sum.
    db_ok, broker_problem, limits = await asyncio.gather(
        rt.db.ping(),
        _broker_problem(rt.broker, timeout),
        refresh_rate_limits(request.app, timeout),
    )
    if is_embedded(rt.broker):
        broker = "in-process"
    else:
        broker = "redis" if broker_problem is None else f"redis unreachable: {broker_problem}"
    status = "unavailable" if not db_ok else "ready" if broker_problem is None else "degraded"
    body = {
        "status": status,
        "database": "ok" if db_ok else "unreachable",
        "broker": broker,
        "rateLimits": limits,
    }
    return Reply(body, status=200 if db_ok else 503)


async def _broker_problem(broker: dramatiq.Broker, timeout: float) -> str | None:
    """Why the broker's Redis does not answer a PING within `timeout`, or None when it does (or the broker
    is in-process)."""
    if is_embedded(broker):
        return None
    client = broker.client  # type: ignore[attr-defined]
    try:
        await asyncio.wait_for(asyncio.to_thread(client.ping), timeout=timeout)
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    except Exception as exc:
        return describe(exc)
    return None
