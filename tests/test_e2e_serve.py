"""End to end against real processes: `concord serve` (embedded) and, on Redis, `concord web` plus a
`dramatiq workers.main` worker process doing the background work."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from tests.conftest import REDIS_URL, RUN_ID
from tests.processes import command, free_port, ready, start, stop


@pytest.fixture
async def hook(aiohttp_server: Any) -> tuple[str, list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []

    async def handle(request: web.Request) -> web.Response:
        calls.append(await request.json())
        return web.json_response({"ok": True})

    async def product_page(request: web.Request) -> web.Response:
        return web.Response(text="<html><body>Wall paint 4 L</body></html>", content_type="text/html")

    app = web.Application()
    app.router.add_post("/hook", handle)
    app.router.add_get("/p/{name}", product_page)  # a retailer's product page for the work journey
    server = await aiohttp_server(app)
    return str(server.make_url("/hook")), calls


async def _journey(base: str, calls: list[dict[str, Any]]) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{base}/api/pact/register", json={"agentName": f"e2e-{RUN_ID}"}) as resp:
            assert resp.status == 201, await resp.text()
            headers = {"Authorization": f"Bearer {(await resp.json())['apiKey']}"}
        topic = {"title": f"E2E topic {RUN_ID}", "content": "# Answer\n\nForty-two.\n", "tier": "empirical"}
        async with http.post(f"{base}/api/pact/topics", json=topic, headers=headers) as resp:
            assert resp.status == 201, await resp.text()
            topic_id = (await resp.json())["id"]
        async with http.get(f"{base}/api/pact/{topic_id}/sections") as resp:
            assert (await resp.json())["sections"][0]["sectionId"] == "sec:answer"
        body = {"message": "Please check the answer", "sectionId": "sec:answer"}
        async with http.post(f"{base}/api/pact/{topic_id}/escalate", json=body, headers=headers) as resp:
            assert resp.status == 201, await resp.text()
    for _ in range(300):
        if calls:
            break
        await asyncio.sleep(0.1)
    assert [c["escalation"]["message"] for c in calls] == ["Please check the answer"]


async def _market(runtime: Any, shop: str) -> None:
    """Quote items, a retailer whose domain is the local site, and a recent median for wall paint."""
    from domain.market import seed
    from domain.market.models import Retailer
    from tests.market_fixtures import add_product

    async with runtime.db.transaction() as session:
        await seed.seed_quote_items(session)
        session.add(Retailer(slug="e2e-shop", name="E2E Shop", domain="127.0.0.1", pickup_available=False))
    for n in range(3):
        await add_product(
            runtime,
            "e2e-shop",
            f"Paint {n} 4L",
            price_cents=6000,
            pack="4 L",
            item_key="paint_interior_wall_l",
            url=f"{shop}/p/known-{n}",
        )


async def _work_journey(base: str, shop: str) -> None:
    """Claim, submit a price observation, and read the validator's outcome (decided by a worker)."""
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{base}/api/pact/register", json={"agentName": f"miner-{RUN_ID}"}) as resp:
            headers = {"Authorization": f"Bearer {(await resp.json())['apiKey']}"}
        claim = {"workType": "price_observation_mining", "payload": {"itemKey": "paint_interior_wall_l"}}
        async with http.post(f"{base}/api/work/claim", json=claim, headers=headers) as resp:
            assert resp.status == 200, await resp.text()
            assignment = (await resp.json())["assignment"]
        observation = {
            "itemKey": "paint_interior_wall_l",
            "retailerSlug": "e2e-shop",
            "productName": "Acme Wall Paint 4L",
            "productUrl": f"{shop}/p/acme-4l",
            "priceCents": 6000,
            "unitPriceCents": 1500,
            "unitPriceUnit": "L",
        }
        body = {"assignmentId": assignment["id"], "submission": observation}
        async with http.post(f"{base}/api/work/submit", json=body, headers=headers) as resp:
            assert resp.status in (200, 202), await resp.text()
            result = await resp.json()
        for _ in range(300):
            if result["status"] != "validating":
                break
            await asyncio.sleep(0.1)
            async with http.get(
                f"{base}/api/work/submissions/{result['submissionId']}", headers=headers
            ) as resp:
                result = await resp.json()
        assert result["status"] == "accepted", result
        assert result["creditsAwarded"] == 2
        async with http.get(f"{base}/api/pact/wallet", headers=headers) as resp:
            assert [
                t["amount"] for t in (await resp.json())["transactions"] if t["ref"] == result["ledgerId"]
            ] == [2]


async def _quiet_test_relay(runtime: Any) -> None:
    """The test process shares the database: its own relay must not take the server's jobs."""
    await runtime.relay.stop()


@pytest.mark.slow
async def test_concord_serve_runs_the_whole_service(runtime: Any, hook: Any, tmp_path: Path):
    url, calls = hook
    shop = url.removesuffix("/hook")
    await _quiet_test_relay(runtime)
    hub_port, docs_port = free_port(), free_port()
    env = {
        "CONCORD_HUB_PORT": str(hub_port),
        "CONCORD_DOCS_PORT": str(docs_port),
        "CONCORD_ESCALATION_WEBHOOK_URL": url,
        "CONCORD_LOG_LEVEL": "INFO",
        "CONCORD_REDIS_URL": "",  # the embedded broker and in-process workers, whatever the database
        "CONCORD_OUTBOUND_ALLOW_PRIVATE": "1",  # the retailer's product page is on loopback
    }
    log = tmp_path / "serve.log"
    proc = start([command("concord"), "serve"], env, log)
    try:
        await ready(proc, log, f"http://127.0.0.1:{hub_port}", f"http://127.0.0.1:{docs_port}")
        await _journey(f"http://127.0.0.1:{hub_port}", calls)
        await _market(runtime, shop)
        await _work_journey(f"http://127.0.0.1:{hub_port}", shop)
    finally:
        code = stop(proc)
    text = log.read_text()
    assert code == 0, text
    assert "Traceback" not in text, text[-4000:]


@pytest.mark.slow
@pytest.mark.skipif(not REDIS_URL, reason="production mode needs Redis (CONCORD_TEST_REDIS_URL)")
async def test_web_process_and_a_dramatiq_worker_process_on_redis(runtime: Any, hook: Any, tmp_path: Path):
    url, calls = hook
    shop = url.removesuffix("/hook")
    await _quiet_test_relay(runtime)
    hub_port = free_port()
    env = {
        "CONCORD_HUB_PORT": str(hub_port),
        "CONCORD_DOCS_PORT": str(free_port()),
        "CONCORD_ESCALATION_WEBHOOK_URL": url,
        # A namespace of their own, so the test process's worker cannot take the job.
        "CONCORD_QUEUE_NAMESPACE": f"concord-e2e-{RUN_ID}",
        "CONCORD_LOG_LEVEL": "INFO",
        "CONCORD_OUTBOUND_ALLOW_PRIVATE": "1",  # the retailer's product page is on loopback
    }
    web_log, worker_log = tmp_path / "web.log", tmp_path / "worker.log"
    web_proc = start([command("concord"), "web"], env, web_log)
    worker = start([command("dramatiq"), "workers.main", "-p", "1", "-t", "2"], env, worker_log)
    try:
        await ready(web_proc, web_log, f"http://127.0.0.1:{hub_port}")
        await _journey(f"http://127.0.0.1:{hub_port}", calls)
        # The price observation's validator runs in the worker process, the only consumer of this namespace.
        await _market(runtime, shop)
        await _work_journey(f"http://127.0.0.1:{hub_port}", shop)
    finally:
        web_code = stop(web_proc)
        stop(worker)
    # Only the worker process consumes this namespace, so the delivery seen in _journey was its work.
    assert web_code == 0, web_log.read_text()
