"""Market products: search, comparison, history, catalogue stats, price refresh and cart optimisation."""

from __future__ import annotations

from aiohttp import web

from domain.market import cart, catalog, scrape
from domain.market.models import CartOptimisation
from domain.market.settings import get_market_settings
from web.hub.auth import agent_context
from web.hub.market.schemas import (
    CartBody,
    CartResult,
    CatalogStats,
    CompareQuery,
    Comparison,
    ProductHistory,
    ProductHistoryQuery,
    ProductSearch,
    ProductSearchQuery,
    ScrapeQueued,
)
from web.kernel.access import Agent
from web.kernel.replies import Answer, Reply
from web.kernel.request import client_address, context, public_url, rate_limits, runtime
from web.kernel.routing import Routes
from web.kernel.waiting import wait_while

routes = Routes()

TAGS = ["Market Products"]
PRODUCT_404 = {404: "Product not found"}


@routes.route(
    "GET",
    "/api/market/products/search",
    summary="Search products by words",
    tags=TAGS,
    query=ProductSearchQuery,
    response=ProductSearch,
)
async def search(request: web.Request, query: ProductSearchQuery) -> Answer:
    async with runtime(request).db.read() as session:
        result = await catalog.search(session, query=query.query, category=query.category, limit=query.limit)
    return ProductSearch.answer(result)


@routes.route(
    "GET",
    "/api/market/products/compare",
    summary="One product across retailers (matched by EAN, then by name and pack size)",
    tags=TAGS,
    query=CompareQuery,
    response=Comparison,
    errors=PRODUCT_404,
)
async def compare(request: web.Request, query: CompareQuery) -> Answer:
    async with runtime(request).db.read() as session:
        result = await catalog.compare(session, query.productId, include_delivery=query.includeDelivery)
    return Comparison.answer(result)


@routes.route(
    "GET",
    "/api/market/products/history",
    summary="Price observations of a product over the last N days",
    tags=TAGS,
    query=ProductHistoryQuery,
    response=ProductHistory,
    errors=PRODUCT_404,
)
async def history(request: web.Request, query: ProductHistoryQuery) -> Answer:
    async with runtime(request).db.read() as session:
        result = await catalog.history(session, query.productId, days=query.days)
    return ProductHistory.answer(result)


@routes.route(
    "GET",
    "/api/market/catalog/stats",
    summary="Catalogue statistics",
    tags=TAGS,
    response=CatalogStats,
)
async def stats(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        return CatalogStats.answer(await catalog.stats(session))


@routes.route(
    "POST",
    "/api/market/products/{productId}/refresh",
    summary="Queue a price scrape of the product's page",
    tags=TAGS,
    response=ScrapeQueued,
    status=202,
    access=Agent(),
    errors={401: "Missing or invalid agent key", **PRODUCT_404, 409: "Product has no page to scrape"},
)
async def refresh(request: web.Request) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        result = await scrape.request_scrape(session, ctx, request.match_info["productId"])
    return ScrapeQueued.of(result)


def _cart_url(request: web.Request, cart_id: str) -> str:
    return public_url(request, f"/api/market/cart/optimise/{cart_id}")


@routes.route(
    "POST",
    "/api/market/cart/optimise",
    summary="Cheapest way to buy a list of items across retailers (exact MILP); 202 with `url` if "
    "still running after a short wait",
    tags=TAGS,
    body=CartBody,
    response=CartResult,
    errors={429: "Too many cart optimisations from this client"},
    also={202: "Still running after the short wait: poll `url`"},
)
async def optimise(request: web.Request, body: CartBody) -> Answer:
    await rate_limits(request).hit(
        "cart optimise", get_market_settings().rate_limit_cart, client_address(request)
    )
    db = runtime(request).db
    async with db.transaction() as session:
        job = await cart.create(session, context(request), body.command())

    async def reload() -> CartOptimisation:
        async with db.read() as session:
            return await cart.get(session, job.id)

    current = await wait_while(
        lambda c: c.status == "pending", job, reload, seconds=get_market_settings().cart_wait_seconds
    )
    return _cart_response(request, current)


def _cart_response(request: web.Request, current: CartOptimisation) -> Answer:
    url = _cart_url(request, current.id)
    body = CartResult.answer(current, url)
    if current.status == "pending":
        return Reply(body, status=202, headers={"Location": url, "Retry-After": "1"})
    return body


@routes.route(
    "GET",
    "/api/market/cart/optimise/{cartId}",
    summary="Result of a cart optimisation (202 while it runs)",
    tags=TAGS,
    response=CartResult,
    errors={404: "Unknown cart optimisation"},
    also={202: "Still running"},
)
async def optimise_result(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        current = await cart.get(session, request.match_info["cartId"])
    return _cart_response(request, current)
