"""Redis trouble never becomes a 500: a real `concord web` process (production mode: Redis for the broker and
the rate limits) against a redis-server of the test's own that is down, comes up, restarts empty and goes
down again, and one whose connection pool is far smaller than the requests arriving at once. Rate limits
fall back to counting per process (and still hold); the process stays ready (its database answers, jobs wait
in the outbox) while readiness and the metrics say what is wrong; liveness stays up."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import RUN_ID
from tests.processes import command, free_port, start, stop
from tests.redis_server import RedisServer, needs_redis_server
from tests.waiting import eventually

pytestmark = needs_redis_server

LIMIT = 3  # registrations and commercial keys per minute per client, in this test's server
CART = {"items": [{"query": "zorblax flour", "quantity": 1}]}


class Web:
    def __init__(self, base: str, http: aiohttp.ClientSession) -> None:
        self.base, self.http = base, http
        self.names = iter(range(1_000_000))

    async def get(self, path: str) -> tuple[int, dict[str, Any]]:
        async with self.http.get(f"{self.base}{path}") as resp:
            return resp.status, await resp.json()

    async def metric(self, name: str, **labels: str) -> float:
        """The value of a sample of /metrics (its labels include `labels`); fails when there is none."""
        async with self.http.get(f"{self.base}/metrics") as resp:
            assert resp.status == 200, await resp.text()
            text = await resp.text()
        found = [
            s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
        ]
        assert len(found) == 1, (name, labels, found)
        return found[0]

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], Any]:
        async with self.http.post(f"{self.base}{path}", json=body) as resp:
            return resp.status, await resp.json(), resp.headers

    async def register(self) -> tuple[int, dict[str, Any], Any]:
        return await self.post("/api/pact/register", {"agentName": f"rt-{next(self.names)}-{RUN_ID}"})


@pytest.fixture
async def redis_server(tmp_path: Path) -> AsyncIterator[RedisServer]:
    server = RedisServer(tmp_path)
    yield server
    server.kill()


async def _web(runtime: Any, tmp_path: Path, redis: RedisServer, **env: str) -> tuple[Any, Path, str]:
    await runtime.relay.stop()  # the test process shares the database: its relay must not take the jobs
    port = free_port()
    log = tmp_path / "web.log"
    proc = start(
        [command("concord"), "web", "--processes", "1"],
        {
            "CONCORD_REDIS_URL": redis.url,
            "CONCORD_QUEUE_NAMESPACE": f"concord-rt-{RUN_ID}",
            "CONCORD_HUB_PORT": str(port),
            "CONCORD_DOCS_PORT": str(free_port()),
            "CONCORD_RATE_LIMIT_REGISTER": str(LIMIT),
            "CONCORD_RATE_LIMIT_KEYS": str(LIMIT),
            "CONCORD_MARKET_CART_WAIT_SECONDS": "0.2",
            "CONCORD_REDIS_TIMEOUT_SECONDS": "1",
            "CONCORD_LOG_LEVEL": "INFO",
            **env,
        },
        log,
    )
    base = f"http://127.0.0.1:{port}"

    async def live() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"web exited:\n{log.read_text()}")
        try:
            async with aiohttp.ClientSession() as http, http.get(f"{base}/healthz") as resp:
                return resp.status == 200
        except aiohttp.ClientError:
            return False

    await eventually(live, timeout=120, interval=0.2)
    return proc, log, base


@pytest.mark.slow
async def test_redis_down_up_restarted_and_down_again_never_answers_5xx(
    runtime: Any, tmp_path: Path, redis_server: RedisServer
) -> None:
    proc, log, base = await _web(runtime, tmp_path, redis_server)  # nothing listens on the port yet
    try:
        async with aiohttp.ClientSession() as http:
            web = Web(base, http)
            # Down from the start: alive and ready (it serves: reads, writes whose jobs wait in the outbox,
            # rate limits counted in memory), and readiness and the metrics say what is wrong, the rate
            # limits' mode included before any limited request tried Redis.
            assert (await web.get("/healthz"))[0] == 200
            status, ready = await web.get("/readyz")
            assert status == 200, ready
            assert ready["status"] == "degraded"
            assert ready["database"] == "ok"
            assert ready["broker"].startswith("redis unreachable: "), ready
            assert str(redis_server.port) in ready["broker"], ready
            assert ready["rateLimits"].startswith("process memory (redis unreachable: "), ready
            assert await web.metric("concord_broker_up") == 0
            assert await web.metric("concord_rate_limits_fallback", app="hub") == 1

            # Registrations: the limit still holds, counted in the process's memory.
            statuses = [(await web.register())[0] for _ in range(LIMIT + 1)]
            assert statuses == [201] * LIMIT + [429], statuses
            status, body, headers = await web.register()
            assert status == 429, body
            assert int(headers["Retry-After"]) >= 1
            status, ready = await web.get("/readyz")
            assert ready["rateLimits"].startswith("process memory (redis unreachable: "), ready

            # Commercial keys: the same.
            keys = [
                (await web.post("/api/axiom/keys", {"ownerName": f"Owner {n}"}))[0] for n in range(LIMIT + 1)
            ]
            assert keys == [201] * LIMIT + [429], keys

            # Cart optimisation: accepted; its job waits in the outbox for the broker (202, pending).
            status, cart, headers = await web.post("/api/market/cart/optimise", CART)
            assert status == 202, cart
            assert cart["status"] == "pending", cart

            # Redis comes up: fully ready, and the limits count there again (fresh: a registration passes).
            await redis_server.start()

            async def ready_again() -> bool:
                status, ready = await web.get("/readyz")
                assert status == 200, ready
                return bool(ready["status"] == "ready")

            await eventually(ready_again, timeout=60, interval=0.2)

            async def registered() -> bool:
                status, body, _headers = await web.register()
                assert status in (201, 429), body  # 429: still the process's count, until it tries Redis
                return status == 201

            await eventually(registered, timeout=60, interval=0.5)
            status, ready = await web.get("/readyz")
            assert status == 200, ready
            assert ready["rateLimits"] == "redis", ready
            assert ready["broker"] == "redis", ready
            assert await web.metric("concord_broker_up") == 1
            assert await web.metric("concord_rate_limits_fallback", app="hub") == 0

            # Restarted (empty, no persistence): the pooled connections are stale; the next requests use
            # fresh ones (one retry) and count in Redis, without a single 5xx.
            redis_server.kill()
            await redis_server.start()
            status, body, _headers = await web.register()
            assert status == 201, body
            status, ready = await web.get("/readyz")
            assert status == 200, ready
            assert ready["rateLimits"] == "redis", ready  # no fallback: the stale connection was retried
            assert (await web.post("/api/axiom/keys", {"ownerName": "After restart"}))[0] == 201

            # Down again, mid-flight: still no 5xx anywhere.
            redis_server.kill()
            for _ in range(LIMIT + 2):
                status, body, _headers = await web.register()
                assert status in (201, 429), body
            status, body, _headers = await web.post("/api/market/cart/optimise", CART)
            assert status in (200, 202), body
            status, ready = await web.get("/readyz")
            assert status == 200, ready
            assert ready["status"] == "degraded", ready
            assert ready["broker"].startswith("redis unreachable: "), ready
            assert ready["rateLimits"].startswith("process memory (redis unreachable: "), ready
            assert await web.metric("concord_broker_up") == 0
            assert (await web.get("/healthz"))[0] == 200
    finally:
        stop(proc, signal.SIGTERM, timeout=60)
    text = log.read_text()
    # One warning when the fallback starts and one when Redis answers again, not one per request.
    assert text.count("rate limits: Redis cannot answer") == 2, text[-3000:]  # down at first, down at last


@pytest.mark.slow
async def test_a_hanging_redis_leaves_the_process_ready(
    runtime: Any, tmp_path: Path, redis_server: RedisServer
) -> None:
    """A Redis that accepts connections and never answers (stopped, not dead): readiness still answers, 200,
    once its bounded wait for Redis is over (CONCORD_REDIS_TIMEOUT_SECONDS, 1 s here), where a probe would
    otherwise time out and take the process out as surely as a 503."""
    await redis_server.start()
    proc, _log, base = await _web(runtime, tmp_path, redis_server)
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
            web = Web(base, http)
            status, ready = await web.get("/readyz")
            assert (status, ready["status"], ready["broker"]) == (200, "ready", "redis"), ready
            assert redis_server.proc is not None
            redis_server.proc.send_signal(signal.SIGSTOP)
            try:
                status, ready = await web.get("/readyz")
                assert status == 200, ready
                assert ready["status"] == "degraded", ready
                assert ready["broker"] == "redis unreachable: no answer within 1 s", ready
                assert ready["rateLimits"] == "process memory (redis unreachable: no answer within 1 s)", (
                    ready
                )
                assert await web.metric("concord_broker_up") == 0
            finally:
                redis_server.proc.send_signal(signal.SIGCONT)

            async def answering() -> bool:
                return (await web.get("/readyz"))[1]["status"] == "ready"

            await eventually(answering, timeout=60, interval=0.2)
    finally:
        stop(proc, signal.SIGTERM, timeout=60)


@pytest.mark.slow
async def test_an_exhausted_connection_pool_makes_requests_wait_not_fail(
    runtime: Any, tmp_path: Path, redis_server: RedisServer
) -> None:
    await redis_server.start()
    limit = 10
    proc, log, base = await _web(
        runtime,
        tmp_path,
        redis_server,
        CONCORD_REDIS_MAX_CONNECTIONS="2",  # 200 registrations at once on one process share two connections
        CONCORD_REDIS_TIMEOUT_SECONDS="30",
        CONCORD_RATE_LIMIT_REGISTER=str(limit),
    )
    try:
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as http:
            web = Web(base, http)
            results = await asyncio.gather(*(web.register() for _ in range(200)))
            statuses = sorted(status for status, _body, _headers in results)
            assert statuses == [201] * limit + [429] * (200 - limit), statuses
            status, ready = await web.get("/readyz")
            assert status == 200, ready
            assert ready["rateLimits"] == "redis", ready  # it never fell back
    finally:
        stop(proc, signal.SIGTERM, timeout=60)
