"""Liveness and readiness, on both apps."""

from __future__ import annotations

import asyncio
import os
from typing import Literal

from aiohttp import web
from pydantic import BaseModel, Field

from web.kernel.request import runtime
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
    broker: str


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
    broker_ok = True if is_embedded(rt.broker) else await asyncio.to_thread(_redis_ok, rt.broker)
    body = {
        "status": "ready" if db_ok and broker_ok else "unavailable",
        "database": "ok" if db_ok else "unreachable",
        "broker": ("in-process" if is_embedded(rt.broker) else "redis")
        + ("" if broker_ok else " unreachable"),
    }
    return json_response(body, status=200 if db_ok and broker_ok else 503)


def _redis_ok(broker: object) -> bool:
    try:
        return bool(broker.client.ping())  # type: ignore[attr-defined]
    except Exception:
        return False
