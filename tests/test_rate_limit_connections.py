"""The rate limits' Redis connections end with their app: a web process that stops, or a process that
builds its apps again (every test does), leaves none open for Redis's idle timeout or the garbage collector
to find. They name themselves (`concord-rate-limits:<host>:<pid>`), so an operator's CLIENT LIST says
whose they are."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from redis.asyncio import Redis

from tests.conftest import REDIS_URL
from web.app import create_docs_app, create_hub_app
from web.kernel.ratelimit import client_name

pytestmark = pytest.mark.skipif(
    not REDIS_URL, reason="the rate limits count in Redis only when it is configured (CONCORD_TEST_REDIS_URL)"
)


async def _named(name: str) -> int:
    """How many of Redis's clients carry `name`."""
    redis = Redis.from_url(REDIS_URL or "")
    try:
        return sum(1 for client in await redis.client_list() if client.get("name") == name)
    finally:
        await redis.aclose()


async def test_the_rate_limits_connections_close_with_their_app(runtime: Any, aiohttp_client: Any) -> None:
    name = client_name()
    assert await _named(name) == 0  # earlier tests' apps left none behind
    hub = await aiohttp_client(create_hub_app(runtime))
    docs = await aiohttp_client(create_docs_app(runtime))
    resp = await hub.post("/api/pact/register", json={"agentName": f"limits-{uuid.uuid4().hex[:8]}"})
    assert resp.status == 201, await resp.text()  # a registration is counted in Redis
    resp = await hub.get("/readyz")  # asks Redis on the limits' own connections
    assert (await resp.json())["rateLimits"] == "redis"
    assert await _named(name) >= 1
    await hub.close()
    await docs.close()
    assert await _named(name) == 0
