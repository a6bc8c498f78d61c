"""Fixtures of the work-economy tests: a local retailer site, the quote-rate item keys, a retailer whose
domain is that site's host, and recent observations to form a median."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from aiohttp import web

from domain.market import seed
from domain.market.models import Retailer
from domain.work.settings import get_work_settings
from tests.market_fixtures import add_product
from tests.work.support import ITEM, SHOP


def shop_app(hits: Counter[str]) -> web.Application:
    """Product pages answering as real retailer sites do: a page, HEAD refused, gone, a WAF, a move off
    the retailer's domain, a slow page."""

    async def page(request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        hits[name] += 1
        if name.startswith("nohead") and request.method == "HEAD":
            return web.Response(status=405)
        if name.startswith("gone"):
            return web.Response(status=404, text="no such product")
        if name.startswith("waf"):
            return web.Response(status=403, text="blocked by bot protection")
        if name.startswith("moved"):
            port = request.url.port
            raise web.HTTPFound(f"http://localhost:{port}/p/ok-elsewhere")
        if name.startswith("slow"):
            await asyncio.sleep(0.5)
        return web.Response(text=f"<html><body><h1>{name}</h1></body></html>", content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/p/{name}", page)
    return app


@pytest.fixture
def hits() -> Counter[str]:
    return Counter()


@pytest.fixture
async def shop(aiohttp_server: Any, hits: Counter[str]) -> Any:
    return await aiohttp_server(shop_app(hits))


@pytest.fixture
async def market(runtime: Any, shop: Any, settings: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Quote items, a retailer on the local site's host, and three recent observations of ITEM at
    15.00, 15.00 and 15.50 per litre (median 15.00)."""
    monkeypatch.setattr(settings, "outbound_allow_private", True)  # the retailer site is on loopback
    async with runtime.db.transaction() as session:
        await seed.seed_quote_items(session)
        session.add(
            Retailer(
                slug=SHOP,
                name="Local Shop",
                domain="127.0.0.1",
                delivery_fee_cents=0,
                free_delivery_over_cents=None,
                pickup_available=False,
                pickup_fee_cents=0,
            )
        )
    for n, cents in enumerate((6000, 6000, 6200)):
        await add_product(
            runtime,
            SHOP,
            f"Wall paint {n} 4L",
            price_cents=cents,
            pack="4 L",
            item_key=ITEM,
            url=f"http://127.0.0.1:{shop.port}/p/known-{n}",
        )
    return runtime


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A generous wait for the validator so a test sees the outcome in the submit answer."""
    cfg = get_work_settings()
    monkeypatch.setattr(cfg, "submit_wait_seconds", 15.0)
    return cfg
