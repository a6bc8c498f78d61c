"""Fuel stations and prices: storing what the feeds report, and the public reads (near me, cheapest,
search, summary by state, one station, history)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TypedDict

from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import sqlutil
from domain.kernel.clock import utcnow
from domain.kernel.errors import BadRequest, NotFound
from domain.market.models import FuelCurrentPrice, FuelPrice, FuelStation


class FuelType(StrEnum):
    """The public hub's fuel vocabulary, spelt exactly so on the wire; the ingestion adapters map each feed's
    codes onto it (fuel_ingest.NSW_CODES, WA_PRODUCTS)."""

    U91 = "U91"
    E10 = "E10"
    U95 = "U95"
    U98 = "U98"
    DIESEL = "Diesel"
    PREMIUM_DIESEL = "PremDSL"
    LPG = "LPG"
    E85 = "E85"
    ADBLUE = "AdBlue"


class AustralianState(StrEnum):
    """The states and territories stations are in, as the feeds and the public hub write them."""

    NSW = "NSW"
    VIC = "VIC"
    QLD = "QLD"
    WA = "WA"
    SA = "SA"
    TAS = "TAS"
    ACT = "ACT"
    NT = "NT"


class FuelFeed(StrEnum):
    """The price feeds `concord fuel ingest --source` reads: NSW FuelCheck (JSON) and WA FuelWatch (RSS)."""

    NSW = "nsw"
    WA = "wa"


EARTH_RADIUS_KM = 6371.0088


@dataclass(frozen=True)
class StationRow:
    id: str
    source: str
    brand: str | None
    name: str
    address: str | None
    suburb: str | None
    state: str
    postcode: str | None
    latitude: float
    longitude: float


@dataclass(frozen=True)
class PriceRow:
    station_id: str
    fuel_type: str
    cents_per_litre: float
    priced_at: datetime


class _PriceValues(TypedDict):
    """One fuel_prices / fuel_current_prices row as insert parameters."""

    station_id: str
    fuel_type: str
    cents_per_litre: float
    priced_at: datetime
    source: str


def fuel_type(value: str, *, field: str = "fuelType") -> FuelType:
    """A fuel type named exactly as the vocabulary spells it (from the command line; the web models take
    the enum themselves)."""
    try:
        return FuelType(value)
    except ValueError:
        allowed = ", ".join(FuelType)
        raise BadRequest(f"{field}: unknown fuel type {value!r}; one of {allowed}", field=field) from None


async def store(
    session: AsyncSession, stations: list[StationRow], prices: list[PriceRow], *, demo: bool = False
) -> int:
    """Upsert stations, append prices (a repeated point is ignored), and move each current price
    forward only when the new one is newer: safe when two ingestions overlap."""
    now = utcnow()
    if stations:
        stmt = sqlutil.insert(session, FuelStation)
        stmt = stmt.on_conflict_do_update(
            index_elements=[FuelStation.id],
            set_={
                c: getattr(stmt.excluded, c)
                for c in ("brand", "name", "address", "suburb", "state", "postcode", "latitude", "longitude")
            }
            | {"updated_at": now},
        )
        await session.execute(
            stmt, [dict(vars(s), demo=demo, updated_at=now) for s in {s.id: s for s in stations}.values()]
        )
    if not prices:
        return 0
    source = "demo" if demo else (stations[0].source if stations else "feed")
    rows: list[_PriceValues] = [
        {
            "station_id": p.station_id,
            "fuel_type": p.fuel_type,
            "cents_per_litre": p.cents_per_litre,
            "priced_at": p.priced_at,
            "source": source,
        }
        for p in prices
    ]
    await session.execute(sqlutil.insert(session, FuelPrice).on_conflict_do_nothing(), rows)
    latest: dict[tuple[str, str], _PriceValues] = {}
    horizon = now + timedelta(minutes=5)
    for row in rows:
        if row["priced_at"] > horizon:
            continue  # tomorrow's announced price (WA) is history now and current only once it applies
        key = (row["station_id"], row["fuel_type"])
        if key not in latest or row["priced_at"] > latest[key]["priced_at"]:
            latest[key] = row
    stmt = sqlutil.insert(session, FuelCurrentPrice)
    stmt = stmt.on_conflict_do_update(
        index_elements=[FuelCurrentPrice.station_id, FuelCurrentPrice.fuel_type],
        set_={
            "cents_per_litre": stmt.excluded.cents_per_litre,
            "priced_at": stmt.excluded.priced_at,
            "source": stmt.excluded.source,
        },
        where=stmt.excluded.priced_at > FuelCurrentPrice.priced_at,
    )
    if latest:
        await session.execute(stmt, list(latest.values()))
    return len(rows)


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(a)))


@dataclass(frozen=True)
class Priced:
    """A station with its current price of one fuel, and its distance from the point asked about (km,
    rounded to 10 m) for a search near a point."""

    station: FuelStation
    price: FuelCurrentPrice
    distance_km: float | None = None


@dataclass(frozen=True)
class NearMe:
    latitude: float
    longitude: float
    fuel_type: str
    radius_km: float
    stations: list[Priced]


@dataclass(frozen=True)
class Cheapest:
    fuel_type: str
    state: str | None
    stations: list[Priced]


@dataclass(frozen=True)
class Found:
    """A station a search found: with the price of the fuel asked for (None without a fuel filter) and
    every current price of the station, by fuel type."""

    station: FuelStation
    price: FuelCurrentPrice | None
    prices: list[FuelCurrentPrice]


@dataclass(frozen=True)
class StationSearch:
    fuel_type: str | None
    state: str | None
    suburb: str | None
    stations: list[Found]


@dataclass(frozen=True)
class FuelSummary:
    """Price ranges by fuel type (min, max, average in c/L, rounded to 0.1) of each state's stations."""

    state: str | None
    states: list[StateSummary]
    generated_at: datetime


@dataclass(frozen=True)
class StateSummary:
    state: str
    stations: int
    fuel_types: list[FuelTypeSummary]


@dataclass(frozen=True)
class FuelTypeSummary:
    fuel_type: str
    stations: int
    min: float
    max: float
    average: float
    latest_priced_at: datetime | None


@dataclass(frozen=True)
class StationPrices:
    """One station with its current prices, by fuel type."""

    station: FuelStation
    prices: list[FuelCurrentPrice]


@dataclass(frozen=True)
class StationHistory:
    """A station's recorded prices over the last `days`, by fuel type then time."""

    station: FuelStation
    fuel_type: str | None
    days: int
    history: list[FuelPrice]


def _base() -> Select[FuelStation, FuelCurrentPrice]:
    return select(FuelStation, FuelCurrentPrice).join(
        FuelCurrentPrice, FuelCurrentPrice.station_id == FuelStation.id
    )


async def near_me(
    session: AsyncSession, *, latitude: float, longitude: float, fuel_type: str, radius_km: float, limit: int
) -> NearMe:
    dlat = radius_km / 110.574
    dlon = radius_km / (111.320 * max(0.01, math.cos(math.radians(latitude))))
    rows = (
        await session.execute(
            _base().where(
                FuelCurrentPrice.fuel_type == fuel_type,
                FuelStation.latitude.between(latitude - dlat, latitude + dlat),
                FuelStation.longitude.between(longitude - dlon, longitude + dlon),
            )
        )
    ).all()
    found = []
    for s, c in rows:
        distance = haversine_km(latitude, longitude, s.latitude, s.longitude)
        if distance <= radius_km:
            found.append((c.cents_per_litre, distance, s.id, s, c))
    found.sort(key=lambda t: (t[0], t[1], t[2]))
    near = [Priced(s, c, round(d, 2)) for _, d, _, s, c in found[:limit]]
    return NearMe(latitude, longitude, fuel_type, radius_km, near)


async def cheapest(session: AsyncSession, *, fuel_type: str, state: str | None, limit: int) -> Cheapest:
    stmt = _base().where(FuelCurrentPrice.fuel_type == fuel_type)
    if state:
        stmt = stmt.where(FuelStation.state == state)
    stmt = stmt.order_by(
        FuelCurrentPrice.cents_per_litre, FuelCurrentPrice.priced_at.desc(), FuelStation.id
    ).limit(limit)
    rows = (await session.execute(stmt)).all()
    return Cheapest(fuel_type, state, [Priced(s, c) for s, c in rows])


async def _prices_of(session: AsyncSession, station_ids: list[str]) -> dict[str, list[FuelCurrentPrice]]:
    out: dict[str, list[FuelCurrentPrice]] = {sid: [] for sid in station_ids}
    if not station_ids:
        return out
    rows = (
        await session.scalars(
            select(FuelCurrentPrice)
            .where(FuelCurrentPrice.station_id.in_(station_ids))
            .order_by(FuelCurrentPrice.fuel_type)
        )
    ).all()
    for c in rows:
        out[c.station_id].append(c)
    return out


async def search(
    session: AsyncSession, *, fuel_type: str | None, state: str | None, suburb: str | None, limit: int
) -> StationSearch:
    filters: list[ColumnElement[bool]] = []
    if state:
        filters.append(FuelStation.state == state)
    if suburb:
        like = "%" + suburb.strip().lower().replace("%", "").replace("_", "") + "%"
        filters.append(func.lower(func.coalesce(FuelStation.suburb, "")).like(like))
    pairs: list[tuple[FuelStation, FuelCurrentPrice | None]]
    if fuel_type:
        priced = await session.execute(
            _base()
            .where(FuelCurrentPrice.fuel_type == fuel_type, *filters)
            .order_by(FuelCurrentPrice.cents_per_litre, FuelStation.id)
            .limit(limit)
        )
        pairs = [(s, c) for s, c in priced]
    else:
        stations = await session.scalars(
            select(FuelStation)
            .where(*filters)
            .order_by(FuelStation.state, FuelStation.suburb, FuelStation.name, FuelStation.id)
            .limit(limit)
        )
        pairs = [(s, None) for s in stations]
    prices = await _prices_of(session, [s.id for s, _ in pairs])
    return StationSearch(fuel_type, state, suburb, [Found(s, c, prices[s.id]) for s, c in pairs])


async def summary(session: AsyncSession, *, state: str | None) -> FuelSummary:
    stmt = (
        select(
            FuelStation.state,
            FuelCurrentPrice.fuel_type,
            func.count(),
            func.min(FuelCurrentPrice.cents_per_litre),
            func.max(FuelCurrentPrice.cents_per_litre),
            func.avg(FuelCurrentPrice.cents_per_litre),
            func.max(FuelCurrentPrice.priced_at),
        )
        .join(FuelCurrentPrice, FuelCurrentPrice.station_id == FuelStation.id)
        .group_by(FuelStation.state, FuelCurrentPrice.fuel_type)
        .order_by(FuelStation.state, FuelCurrentPrice.fuel_type)
    )
    if state:
        stmt = stmt.where(FuelStation.state == state)
    rows = (await session.execute(stmt)).all()
    counts = select(FuelStation.state, func.count()).group_by(FuelStation.state)
    if state:
        counts = counts.where(FuelStation.state == state)
    stations = dict((await session.execute(counts)).all())
    states: dict[str, StateSummary] = {}
    for st, ft, n, lo, hi, avg, latest in rows:
        entry = states.setdefault(st, StateSummary(st, stations.get(st, 0), []))
        entry.fuel_types.append(
            FuelTypeSummary(ft, n, round(lo, 1), round(hi, 1), round(float(avg), 1), _aware(latest))
        )
    return FuelSummary(state, list(states.values()), utcnow())


def _aware(value: datetime | str | None) -> datetime | None:
    """Aggregates bypass the column type on SQLite and come back as naive UTC text."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


async def _station(session: AsyncSession, station_id: str) -> FuelStation:
    valid = 0 < len(station_id) <= 80 and station_id.isprintable()
    station = await session.get(FuelStation, station_id) if valid else None
    if station is None:
        raise NotFound(f"fuel station {station_id!r} not found", code="station_not_found")
    return station


async def station(session: AsyncSession, station_id: str) -> StationPrices:
    s = await _station(session, station_id)
    return StationPrices(s, (await _prices_of(session, [s.id]))[s.id])


async def history(
    session: AsyncSession, *, station_id: str, fuel_type: str | None, days: int
) -> StationHistory:
    s = await _station(session, station_id)
    stmt = select(FuelPrice).where(
        FuelPrice.station_id == s.id, FuelPrice.priced_at >= utcnow() - timedelta(days=days)
    )
    if fuel_type:
        stmt = stmt.where(FuelPrice.fuel_type == fuel_type)
    rows = (await session.scalars(stmt.order_by(FuelPrice.fuel_type, FuelPrice.priced_at))).all()
    return StationHistory(s, fuel_type, days, list(rows))
