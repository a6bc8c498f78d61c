"""Fuel feed ingestion: NSW FuelCheck (JSON `{stations, prices}`) and WA FuelWatch (RSS) adapters.

A bad row (missing coordinates, unknown fuel code, unreadable price or time, a price for a station the
feed did not describe) is skipped and counted; it never aborts the run. Codes are mapped onto the
hub's fuel vocabulary (fuel.FuelType). Sources are a URL (fetched with the guarded client) or a file.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

from lxml import etree
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import outbox
from domain.kernel.db import Database
from domain.kernel.outbox import Job
from domain.market import fuel, outbound
from domain.market.settings import get_market_settings

SOURCES = tuple(f.value for f in fuel.FuelFeed)
NSW_CODES = {
    "U91": "U91",
    "E10": "E10",
    "P95": "U95",
    "P98": "U98",
    "DL": "Diesel",
    "PDL": "PremDSL",
    "LPG": "LPG",
    "E85": "E85",
}
# WA FuelWatch product ids (danielmichaels/fuelwatcher constants, MIT).
WA_PRODUCTS = {"1": "U91", "2": "U95", "4": "Diesel", "5": "LPG", "6": "U98", "10": "E85", "11": "PremDSL"}
SYDNEY = ZoneInfo("Australia/Sydney")
HOBART = ZoneInfo("Australia/Hobart")
AWST = timezone(timedelta(hours=8))
_ADDRESS_TAIL = re.compile(
    r"(?:,\s*)?([A-Za-z][A-Za-z '\-]+?)\s+(NSW|TAS|ACT|VIC|QLD|SA|WA|NT)\s+(\d{4})\s*$"
)


class IngestError(Exception):
    pass


@dataclass
class Report:
    source: str
    stations: int = 0
    prices: int = 0
    stored: int = 0
    skipped: int = 0
    reasons: list[str] = field(default_factory=list)

    def skip(self, reason: str) -> None:
        self.skipped += 1
        if len(self.reasons) < 20:
            self.reasons.append(reason)

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "stations": self.stations,
            "prices": self.prices,
            "stored": self.stored,
            "skipped": self.skipped,
            "reasons": self.reasons,
        }


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _coord(value: Any, low: float, high: float) -> float | None:
    number = _number(value)
    return number if number is not None and low <= number <= high and number != 0 else None


def parse_nsw_time(value: Any, state: str) -> datetime | None:
    """FuelCheck sends `29/05/2018 23:28:20` or `2018-05-29 23:28:20` (local time), sometimes ISO."""
    text = str(value or "").strip()
    zone = HOBART if state == "TAS" else SYDNEY
    for fmt in ("%d/%m/%Y %H:%M:%S", "%Y-%m-%d %H:%M:%S", "%d/%m/%Y %I:%M:%S %p"):
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=zone)
        except ValueError:
            continue
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=zone)


def _suburb(address: str | None, state: str) -> tuple[str | None, str | None]:
    match = _ADDRESS_TAIL.search(address or "")
    if not match:
        return None, None
    suburb = match.group(1).split(",")[-1].strip()
    return suburb.title(), match.group(3)


def parse_nsw(data: Any, report: Report) -> tuple[list[fuel.StationRow], list[fuel.PriceRow]]:
    if not isinstance(data, dict) or not isinstance(data.get("stations"), list):
        raise IngestError("not a FuelCheck prices document: expected an object with a stations array")
    stations: dict[str, fuel.StationRow] = {}
    for raw in data["stations"]:
        if not isinstance(raw, dict):
            report.skip("station row is not an object")
            continue
        code = str(raw.get("code") or raw.get("stationcode") or "").strip()
        state = str(raw.get("state") or "NSW").strip().upper()
        loc = raw.get("location")
        if not isinstance(loc, dict):
            loc = {}
        lat = _coord(loc.get("latitude"), -45, -9)
        lon = _coord(loc.get("longitude"), 110, 155)
        name = str(raw.get("name") or "").strip()
        if not code or not name or lat is None or lon is None or state not in set(fuel.AustralianState):
            report.skip(f"station {code or '?'}: missing code, name, state or valid coordinates")
            continue
        address = str(raw.get("address") or "").strip() or None
        suburb, postcode = _suburb(address, state)
        stations[f"{state}:{code}"] = fuel.StationRow(
            id=f"{state.lower()}-{code}",
            source="nsw",
            brand=str(raw.get("brand") or "").strip() or None,
            name=name,
            address=address,
            suburb=suburb,
            state=state,
            postcode=postcode,
            latitude=lat,
            longitude=lon,
        )
    prices: list[fuel.PriceRow] = []
    for raw in data.get("prices") or []:
        if not isinstance(raw, dict):
            report.skip("price row is not an object")
            continue
        code = str(raw.get("stationcode") or "").strip()
        state = str(raw.get("state") or "NSW").strip().upper()
        station = stations.get(f"{state}:{code}")
        fuel_type = NSW_CODES.get(str(raw.get("fueltype") or "").strip().upper())
        cpl = _number(raw.get("price"))
        when = parse_nsw_time(raw.get("lastupdated"), state)
        if station is None:
            report.skip(f"price for unknown station {code or '?'}")
        elif fuel_type is None:
            report.skip(f"station {code}: unsupported fuel type {raw.get('fueltype')!r}")
        elif cpl is None or not 30 <= cpl <= 1000:
            report.skip(f"station {code}: price {raw.get('price')!r} out of range")
        elif when is None:
            report.skip(f"station {code}: unreadable lastupdated {raw.get('lastupdated')!r}")
        else:
            prices.append(fuel.PriceRow(station.id, fuel_type, round(cpl, 1), when))
    return list(stations.values()), prices


def _text(item: Any, tag: str) -> str:
    node = item.find(tag)
    return (node.text or "").strip() if node is not None and node.text else ""


def parse_wa(
    body: bytes, report: Report, *, fuel_type: str
) -> tuple[list[fuel.StationRow], list[fuel.PriceRow]]:
    body = body.lstrip(b"\xef\xbb\xbf").lstrip()
    try:
        root = etree.fromstring(body, parser=etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as exc:
        raise IngestError(f"not a FuelWatch RSS document: {exc}") from None
    items = root.findall(".//item")
    if root.tag != "rss" and not items:
        raise IngestError("not a FuelWatch RSS document: no rss root or items")
    stations: dict[str, fuel.StationRow] = {}
    prices: list[fuel.PriceRow] = []
    for item in items:
        name = _text(item, "trading-name") or _text(item, "title").split(":", 1)[-1].strip()
        address = _text(item, "address")
        suburb = _text(item, "location")
        lat = _coord(_text(item, "latitude"), -36, -13)
        lon = _coord(_text(item, "longitude"), 112, 130)
        try:
            cpl = float(_text(item, "price"))
        except ValueError:
            cpl = -1.0
        try:
            day = datetime.strptime(_text(item, "date"), "%Y-%m-%d").date()
        except ValueError:
            day = None
        label = name or "?"
        if not name or lat is None or lon is None:
            report.skip(f"{label}: missing trading name or valid coordinates")
            continue
        if not 30 <= cpl <= 1000:
            report.skip(f"{label}: price {_text(item, 'price')!r} out of range")
            continue
        if day is None:
            report.skip(f"{label}: unreadable date {_text(item, 'date')!r}")
            continue
        digest = hashlib.sha1(f"{name}|{address}|{suburb}".lower().encode()).hexdigest()[:12]
        station = fuel.StationRow(
            id=f"wa-{digest}",
            source="wa",
            brand=_text(item, "brand") or None,
            name=name,
            address=address or None,
            suburb=suburb.title() or None,
            state="WA",
            postcode=None,
            latitude=lat,
            longitude=lon,
        )
        stations[station.id] = station
        # FuelWatch prices are fixed for the day from 6 am.
        prices.append(
            fuel.PriceRow(station.id, fuel_type, round(cpl, 1), datetime.combine(day, time(6), AWST))
        )
    return list(stations.values()), prices


def wa_fuel_type(source: str, given: str | None) -> str:
    if given:
        return fuel.fuel_type(given, field="fuel_type")
    product = parse_qs(urlsplit(source).query).get("Product", [""])[0]
    return WA_PRODUCTS.get(product, "U91")


async def read_source(source: str) -> bytes:
    if source.startswith(("http://", "https://")):
        try:
            page = await outbound.fetch(source, accept="application/json, application/rss+xml, text/xml, */*")
        except outbound.FetchError as exc:
            raise IngestError(f"{source}: {exc.detail}") from None
        if page.status != 200:
            raise IngestError(f"{source}: HTTP {page.status}")
        return page.body
    try:
        return await asyncio.to_thread(Path(source).read_bytes)
    except OSError as exc:
        raise IngestError(f"{source}: cannot read file: {exc.strerror or exc}") from None


def parse(kind: str, body: bytes, source: str, fuel_type: str | None, report: Report) -> tuple[Any, Any]:
    if kind == fuel.FuelFeed.NSW:
        try:
            data = json.loads(body.lstrip(b"\xef\xbb\xbf"))
        except ValueError as exc:
            raise IngestError(f"not JSON: {exc}") from None
        return parse_nsw(data, report)
    if kind == fuel.FuelFeed.WA:
        return parse_wa(body, report, fuel_type=wa_fuel_type(source, fuel_type))
    raise IngestError(f"unknown source kind {kind!r}; one of {', '.join(SOURCES)}")


async def ingest_bytes(
    session: AsyncSession, kind: str, body: bytes, *, source: str = "", fuel_type: str | None = None
) -> Report:
    report = Report(source=kind)
    stations, prices = parse(kind, body, source, fuel_type, report)
    report.stations, report.prices = len(stations), len(prices)
    report.stored = await fuel.store(session, stations, prices)
    return report


async def ingest(db: Any, kind: str, source: str, *, fuel_type: str | None = None) -> Report:
    """Read a feed (URL or file) and store it in one unit of work."""
    body = await read_source(source)
    async with db.transaction() as session:
        return await ingest_bytes(session, kind, body, source=source, fuel_type=fuel_type)


async def download_feed(_db: Database, payload: dict[str, Any]) -> bytes:
    """The download, with no transaction open (the job's `prepare` step): no lock is held while the feed
    is fetched. A network failure raises: the job is retried."""
    return await read_source(payload["url"])


async def ingest_job(session: AsyncSession, payload: dict[str, Any]) -> None:
    """Store the downloaded feed in the transaction that marks the job done."""
    body = payload.get(outbox.PREPARED)
    if not isinstance(body, bytes):
        return
    await ingest_bytes(
        session, payload["kind"], body, source=payload["url"], fuel_type=payload.get("fuel_type")
    )


INGEST_JOB = Job("market.fuel_ingest", ingest_job, prepare=download_feed)


async def schedule_ingest(session: AsyncSession) -> int:
    """Enqueue one ingestion job per configured feed (CONCORD_MARKET_FUEL_NSW_URL / _WA_URL)."""
    cfg = get_market_settings()
    count = 0
    for kind, url in (("nsw", cfg.fuel_nsw_url), ("wa", cfg.fuel_wa_url)):
        if url:
            outbox.enqueue(session, INGEST_JOB, {"kind": kind, "url": url})
            count += 1
    return count
