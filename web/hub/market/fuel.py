"""Market fuel: stations near a point, cheapest, search, state summary, one station, price history."""

from __future__ import annotations

from aiohttp import web

from domain.market import fuel
from web.hub.market.schemas import (
    CheapestFuel,
    CheapestQuery,
    FuelHistoryQuery,
    FuelSearch,
    FuelSearchQuery,
    FuelSummary,
    FuelSummaryQuery,
    NearMe,
    NearMeQuery,
    StationDetail,
    StationHistory,
)
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()

TAGS = ["Market Fuel"]


@routes.route(
    "GET",
    "/api/market/fuel/near-me",
    summary="Stations within a radius, cheapest first, then nearest",
    tags=TAGS,
    query=NearMeQuery,
    response=NearMe,
)
async def near_me(request: web.Request, query: NearMeQuery) -> Answer:
    async with runtime(request).db.read() as session:
        result = await fuel.near_me(
            session,
            latitude=query.latitude,
            longitude=query.longitude,
            fuel_type=query.fuelType,
            radius_km=query.radiusKm,
            limit=query.limit,
        )
    return NearMe.answer(result)


@routes.route(
    "GET",
    "/api/market/fuel/cheapest",
    summary="Cheapest current prices",
    tags=TAGS,
    query=CheapestQuery,
    response=CheapestFuel,
)
async def cheapest(request: web.Request, query: CheapestQuery) -> Answer:
    async with runtime(request).db.read() as session:
        result = await fuel.cheapest(session, fuel_type=query.fuelType, state=query.state, limit=query.limit)
    return CheapestFuel.answer(result)


@routes.route(
    "GET",
    "/api/market/fuel/search",
    summary="Stations by state, suburb and fuel type",
    tags=TAGS,
    query=FuelSearchQuery,
    response=FuelSearch,
)
async def search(request: web.Request, query: FuelSearchQuery) -> Answer:
    async with runtime(request).db.read() as session:
        result = await fuel.search(
            session, fuel_type=query.fuelType, state=query.state, suburb=query.suburb, limit=query.limit
        )
    return FuelSearch.answer(result)


@routes.route(
    "GET",
    "/api/market/fuel/summary",
    summary="Minimum, maximum and average prices by state and fuel type",
    tags=TAGS,
    query=FuelSummaryQuery,
    response=FuelSummary,
)
async def summary(request: web.Request, query: FuelSummaryQuery) -> Answer:
    async with runtime(request).db.read() as session:
        return FuelSummary.answer(await fuel.summary(session, state=query.state))


@routes.route(
    "GET",
    "/api/market/fuel/history",
    summary="Price history of a station",
    tags=TAGS,
    query=FuelHistoryQuery,
    response=StationHistory,
    errors={404: "Station not found"},
)
async def history(request: web.Request, query: FuelHistoryQuery) -> Answer:
    async with runtime(request).db.read() as session:
        result = await fuel.history(
            session, station_id=query.stationId, fuel_type=query.fuelType, days=query.days
        )
    return StationHistory.answer(result)


@routes.route(
    "GET",
    "/api/market/fuel/stations/{stationId}",
    summary="One station with its current prices",
    tags=TAGS,
    response=StationDetail,
    errors={404: "Station not found"},
)
async def station(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        return StationDetail.answer(await fuel.station(session, request.match_info["stationId"]))
