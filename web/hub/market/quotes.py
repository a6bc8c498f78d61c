"""Market quote rates: canonical per-unit retail rates by stable item key."""

from __future__ import annotations

from aiohttp import web

from domain.market import quote_rates
from web.hub.market.schemas import QuoteItems, QuoteRatesQuery, QuoteRatesResponse
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()

TAGS = ["Market Quote Rates"]


@routes.route(
    "GET",
    "/api/market/quote-rates",
    summary="Current per-unit rates of 1 to 64 item keys",
    tags=TAGS,
    query=QuoteRatesQuery,
    response=QuoteRatesResponse,
    errors={400: "items missing, more than 64 keys, or unknown keys (listed in `unknown`)"},
)
async def rates(request: web.Request, query: QuoteRatesQuery) -> Answer:
    keys = quote_rates.parse_keys(query.items)
    async with runtime(request).db.read() as session:
        return await quote_rates.quote_rates(session, keys)


@routes.route(
    "GET",
    "/api/market/quote-rates/items",
    summary="The known item keys",
    tags=TAGS,
    response=QuoteItems,
)
async def items(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        return {"items": await quote_rates.list_items(session)}
