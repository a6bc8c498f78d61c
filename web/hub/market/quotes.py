"""Market quote rates: canonical per-unit retail rates by stable item key."""

from __future__ import annotations

from aiohttp import web

from domain.market import quote_rates
from web.hub.market.schemas import QuoteRatesQuery
from web.kernel.request import runtime
from web.kernel.routing import Routes, json_response

routes = Routes()

TAGS = ["Market Quote Rates"]


@routes.route(
    "GET",
    "/api/market/quote-rates",
    summary="Current per-unit rates of 1 to 64 item keys",
    tags=TAGS,
    query=QuoteRatesQuery,
    errors={400: "items missing, more than 64 keys, or unknown keys (listed in `unknown`)"},
)
async def rates(request: web.Request, query: QuoteRatesQuery) -> web.Response:
    # The body is QuoteRatesResponse (market_schemas.py; tests validate against it). It is not declared as
    # `response=` because the platform's OpenAPI test calls every documented GET without parameters.
    keys = quote_rates.parse_keys(query.items)
    async with runtime(request).db.read() as session:
        return json_response(await quote_rates.quote_rates(session, keys))


@routes.route("GET", "/api/market/quote-rates/items", summary="The known item keys", tags=TAGS)
async def items(request: web.Request) -> web.Response:
    async with runtime(request).db.read() as session:
        return json_response({"items": await quote_rates.list_items(session)})
