"""Fuel: NSW FuelCheck and WA FuelWatch ingestion (CLI, sweep from a URL), and the public reads."""

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from aiohttp import web
from sqlalchemy import select

from domain import wiring
from domain.kernel import sweeps
from domain.kernel.clock import utcnow
from domain.kernel.models import OutboxJob
from domain.market import fuel
from domain.market.settings import get_market_settings
from tests.lock_probe import write_now
from tests.market_fixtures import seeded  # noqa: F401 - fixture
from tests.waiting import eventually

ROOT = Path(__file__).resolve().parent.parent
PERTH = ZoneInfo("Australia/Perth")


def nsw_feed(hours_ago: float = 1.0, e10: float = 146.9) -> dict:
    local = utcnow().astimezone(ZoneInfo("Australia/Sydney")) - timedelta(hours=hours_ago)
    dmy, ymd = local.strftime("%d/%m/%Y %H:%M:%S"), local.strftime("%Y-%m-%d %H:%M:%S")
    return {
        "stations": [
            {
                "brandid": "1-1",
                "stationid": "1-SBA",
                "brand": "Cool Fuel Brand",
                "code": 1,
                "name": "Cool Fuel Hurstville",
                "address": "123 Fake Street, HURSTVILLE NSW 2220",
                "location": {"latitude": -33.965, "longitude": 151.101},
                "state": "NSW",
            },
            {
                "brand": "Cool Fuel Brand",
                "code": 2,
                "name": "Cool Fuel Kogarah",
                "address": "1 Main Street, KOGARAH NSW 2217",
                "location": {"latitude": -33.963, "longitude": 151.133},
            },
            {"code": 3, "name": "No Coordinates", "address": "9 Nowhere Rd", "location": {}},
            {
                "brand": "Island Fuel",
                "code": 4,
                "name": "Island Fuel Hobart",
                "address": "5 Elizabeth Street, HOBART TAS 7000",
                "location": {"latitude": -42.88, "longitude": 147.33},
                "state": "TAS",
            },
            "junk",
        ],
        "prices": [
            {"stationcode": 1, "state": "NSW", "fueltype": "E10", "price": e10, "lastupdated": dmy},
            {"stationcode": 1, "state": "NSW", "fueltype": "P95", "price": 150.9, "lastupdated": ymd},
            {"stationcode": 2, "fueltype": "DL", "price": "160.5", "lastupdated": dmy},
            {"stationcode": 3, "fueltype": "U91", "price": 140.0, "lastupdated": dmy},
            {"stationcode": 1, "fueltype": "EV", "price": 50, "lastupdated": dmy},
            {"stationcode": 2, "fueltype": "U91", "price": "n/a", "lastupdated": dmy},
            {"stationcode": 2, "fueltype": "U91", "price": 155.0, "lastupdated": "yesterday"},
            {"stationcode": 4, "state": "TAS", "fueltype": "U91", "price": 170.1, "lastupdated": dmy},
        ],
    }


def fuelwatch_day() -> date:
    """The day whose FuelWatch prices apply now: each day's price holds from 06:00 Perth time, so before
    then it is still the day before's (a feed dated by the calendar alone is not current until 06:00)."""
    return (utcnow().astimezone(PERTH) - timedelta(hours=6)).date()


def wa_feed(day: date, perth: str = "168.5") -> bytes:
    items = [
        ("171.9", "Kwinana Fuel Stop", "KWINANA BEACH", "1 Beach Rd", "-32.23", "115.77"),
        (perth, "Perth Central Fuel", "PERTH", "100 Hay St", "-31.95", "115.86"),
        ("165.0", "Nowhere Fuel", "NOWHERE", "0 Nil Rd", "", ""),
        ("cheap", "Bad Price Fuel", "PERTH", "2 Hay St", "-31.95", "115.86"),
    ]
    body = "".join(
        f"<item><title>{p}: {n}</title><description>Address: {a}</description><brand>Demo</brand>"
        f"<date>{day.isoformat()}</date><price>{p}</price><trading-name>{n}</trading-name><location>{s}</location>"
        f"<address>{a}</address><phone>(08) 9000 0000</phone><latitude>{lat}</latitude>"
        f"<longitude>{lon}</longitude><site-features>, Open 24 hours</site-features></item>"
        for p, n, s, a, lat, lon in items
    )
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>\r\n'
        f'<rss version="2.0"><channel><title>FuelWatch</title>{body}</channel></rss>'
    )
    return b"\xef\xbb\xbf" + xml.replace("><", ">\r\n<").encode()


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


async def run_cli(*args: str) -> Done:
    """The real command in a child process (asynchronously: the app under test keeps running)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "concord_cli",
        *args,
        cwd=ROOT,
        env=os.environ.copy(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    return Done(proc.returncode or 0, out.decode(), err.decode())


async def test_cli_ingests_nsw_file_and_counts_bad_rows(hub, runtime, tmp_path):
    feed = tmp_path / "prices.json"
    feed.write_text(json.dumps(nsw_feed()))
    done = await run_cli("fuel", "ingest", "--source", "nsw", str(feed))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["stations"] == 3
    assert report["prices"] == 4
    assert report["skipped"] == 6
    assert any("No Coordinates" in r or "station 3" in r for r in report["reasons"])
    station = await (await hub.get("/api/market/fuel/stations/nsw-1")).json()
    assert station["suburb"] == "Hurstville"
    assert station["postcode"] == "2220"
    assert station["state"] == "NSW"
    assert {p["fuelType"]: p["price"] for p in station["prices"]} == {"E10": 146.9, "U95": 150.9}
    tas = await (await hub.get("/api/market/fuel/stations/tas-4")).json()
    assert tas["state"] == "TAS"
    assert tas["prices"][0]["fuelType"] == "U91"
    # Re-ingesting the same feed adds nothing; an older price never replaces a newer one.
    assert (await run_cli("fuel", "ingest", "--source", "nsw", str(feed))).returncode == 0
    feed.write_text(json.dumps(nsw_feed(hours_ago=5, e10=120.0)))
    assert (await run_cli("fuel", "ingest", "--source", "nsw", str(feed))).returncode == 0
    history = await (await hub.get("/api/market/fuel/history?stationId=nsw-1&fuelType=E10")).json()
    assert [h["price"] for h in history["history"]] == [120.0, 146.9]
    station = await (await hub.get("/api/market/fuel/stations/nsw-1")).json()
    assert {p["fuelType"]: p["price"] for p in station["prices"]}["E10"] == 146.9


async def test_cli_reports_unreadable_sources(runtime, tmp_path):
    done = await run_cli("fuel", "ingest", "--source", "nsw", str(tmp_path / "missing.json"))
    assert done.returncode == 1
    assert "cannot read file" in done.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    done = await run_cli("fuel", "ingest", "--source", "nsw", str(bad))
    assert done.returncode == 1
    assert "stations array" in done.stderr
    done = await run_cli("fuel", "ingest", "--source", "wa", str(bad))
    assert done.returncode == 1
    assert "FuelWatch" in done.stderr


async def test_sweep_ingests_wa_feed_from_url(hub, runtime, aiohttp_server, settings, monkeypatch):
    async def rss(request: web.Request) -> web.Response:
        assert "Concord" in request.headers["User-Agent"]
        return web.Response(body=wa_feed(fuelwatch_day()), content_type="application/rss+xml")

    app = web.Application()
    app.router.add_get("/fuelwatch/fuelWatchRSS", rss)
    server = await aiohttp_server(app)
    monkeypatch.setattr(settings, "outbound_allow_private", True)
    url = str(server.make_url("/fuelwatch/fuelWatchRSS?Product=4&Day=today"))
    monkeypatch.setattr(get_market_settings(), "fuel_wa_url", url)
    sweep = next(s for s in wiring.SWEEPS if s.name == "market.fuel_ingest")
    assert await sweeps.run(runtime.db, sweep, "test") == 1

    async def ingested():
        body = await (await hub.get("/api/market/fuel/search?state=WA&fuelType=Diesel")).json()
        return body["count"] == 2 and body

    body = await eventually(ingested)
    assert [s["name"] for s in body["stations"]] == ["Perth Central Fuel", "Kwinana Fuel Stop"]
    assert body["stations"][0]["price"] == 168.5
    assert body["stations"][0]["suburb"] == "Perth"


async def test_wa_price_for_tomorrow_becomes_current_from_six_in_the_morning(hub, runtime, clock):
    from domain.market import fuel_ingest

    # Noon in Perth of the day whose prices apply now: six hours from either 06:00, so the real clock cannot
    # cross one between the ingests and the reads below (it did once, at 05:59 Perth time).
    clock.advance(datetime.combine(fuelwatch_day(), time(12), PERTH) - utcnow())
    today = fuelwatch_day()
    tomorrow = today + timedelta(days=1)

    async def ingest(day: date, perth: str) -> None:
        async with runtime.db.transaction() as session:
            await fuel_ingest.ingest_bytes(session, "wa", wa_feed(day, perth=perth), fuel_type="U91")

    async def perth_prices() -> tuple[list[float], list[float]]:
        body = await (await hub.get("/api/market/fuel/search?state=WA&suburb=perth")).json()
        station = body["stations"][0]
        history = await (await hub.get(f"/api/market/fuel/history?stationId={station['id']}")).json()
        return [p["price"] for p in station["prices"]], [h["price"] for h in history["history"]]

    await ingest(today, "168.5")
    await ingest(tomorrow, "159.9")  # announced in the afternoon: kept, not yet the price
    assert await perth_prices() == ([168.5], [168.5, 159.9])
    six_tomorrow = datetime.combine(tomorrow, time(6), PERTH)
    clock.advance(six_tomorrow - utcnow() + timedelta(minutes=1))
    assert fuelwatch_day() == tomorrow
    await ingest(tomorrow, "159.9")
    assert await perth_prices() == ([159.9], [168.5, 159.9])


async def test_sweep_refuses_private_feed_address_by_default(runtime, aiohttp_server, monkeypatch):
    from domain.market import fuel_ingest

    app = web.Application()
    server = await aiohttp_server(app)
    with pytest.raises(fuel_ingest.IngestError, match="non-public address"):
        await fuel_ingest.read_source(str(server.make_url("/feed")))


async def add_stations(rt, rows):
    now = utcnow()
    async with rt.db.transaction() as session:
        await fuel.store(
            session,
            [
                fuel.StationRow(sid, "nsw", "B", sid, None, sub, st, None, lat, lon)
                for sid, sub, st, lat, lon, _ in rows
            ],
            [fuel.PriceRow(sid, "U91", price, now) for sid, _, _, _, _, price in rows],
        )


async def test_near_me_sorts_by_price_then_distance(hub, runtime):
    await add_stations(
        runtime,
        [
            ("far-cheap", "Alpha", "NSW", -33.90, 151.20, 150.0),
            ("near-cheap", "Beta", "NSW", -33.871, 151.201, 150.0),
            ("near-dear", "Gamma", "NSW", -33.870, 151.200, 190.0),
            ("outside", "Delta", "NSW", -34.50, 151.20, 100.0),
        ],
    )
    resp = await hub.get("/api/market/fuel/near-me?latitude=-33.87&longitude=151.2&radiusKm=10")
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    assert [s["id"] for s in body["stations"]] == ["near-cheap", "far-cheap", "near-dear"]
    assert all(s["distanceKm"] <= 10 for s in body["stations"])
    assert body["stations"][1]["distanceKm"] == pytest.approx(3.34, abs=0.05)
    body = await (
        await hub.get("/api/market/fuel/near-me?latitude=-33.87&longitude=151.2&radiusKm=100&limit=1")
    ).json()
    assert [s["id"] for s in body["stations"]] == ["outside"]
    body = await (
        await hub.get("/api/market/fuel/near-me?latitude=-33.87&longitude=151.2&fuelType=E10")
    ).json()
    assert body["stations"] == []


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("longitude=151", "latitude"),
        ("latitude=-33", "longitude"),
        ("latitude=91&longitude=151", "latitude"),
        ("latitude=-33&longitude=-181", "longitude"),
        ("latitude=abc&longitude=151", "latitude"),
        ("latitude=nan&longitude=151", "latitude"),
        ("latitude=-33&longitude=151&radiusKm=0", "radiusKm"),
        ("latitude=-33&longitude=151&fuelType=kerosene", "fuelType"),
        ("latitude=-33&longitude=151&limit=1000", "limit"),
    ],
)
async def test_near_me_bad_input_is_400(hub, runtime, query, field):
    resp = await hub.get(f"/api/market/fuel/near-me?{query}")
    assert resp.status == 400
    assert (await resp.json())["field"] == field


@pytest.mark.usefixtures("seeded")
async def test_seeded_reads(hub):
    body = await (await hub.get("/api/market/fuel/cheapest?fuelType=U91&state=VIC&limit=3")).json()
    assert len(body["stations"]) == 3
    assert {s["state"] for s in body["stations"]} == {"VIC"}
    prices = [s["price"] for s in body["stations"]]
    assert prices == sorted(prices)
    everywhere = await (await hub.get("/api/market/fuel/cheapest?fuelType=U91&limit=1")).json()
    assert everywhere["stations"][0]["price"] <= prices[0]
    body = await (await hub.get("/api/market/fuel/search?suburb=bondi&state=NSW")).json()
    assert body["count"] == 2
    assert all(s["suburb"] == "Bondi Junction" and s["prices"] for s in body["stations"])
    summary = await (await hub.get("/api/market/fuel/summary")).json()
    states = {s["state"] for s in summary["states"]}
    assert {"NSW", "VIC", "QLD", "WA", "SA", "ACT"} <= states
    for state in summary["states"]:
        for row in state["fuelTypes"]:
            assert row["min"] <= row["average"] <= row["max"]
    one = await (await hub.get("/api/market/fuel/summary?state=WA")).json()
    assert [s["state"] for s in one["states"]] == ["WA"]
    station_id = body["stations"][0]["id"]
    station = await (await hub.get(f"/api/market/fuel/stations/{station_id}")).json()
    assert station["demo"] is True
    history = await (
        await hub.get(f"/api/market/fuel/history?stationId={station_id}&fuelType=U91&days=30")
    ).json()
    assert len(history["history"]) == 6
    short = await (
        await hub.get(f"/api/market/fuel/history?stationId={station_id}&fuelType=U91&days=5")
    ).json()
    assert 0 < len(short["history"]) < 6
    for path, status in (
        ("/api/market/fuel/stations/nope", 404),
        ("/api/market/fuel/history?stationId=nope", 404),
        ("/api/market/fuel/history", 400),
        ("/api/market/fuel/cheapest?state=XYZ", 400),
        ("/api/market/fuel/summary?state=ZZ", 400),
        ("/api/market/fuel/search?fuelType=jet", 400),
    ):
        assert (await hub.get(path)).status == status, path


async def test_announced_future_price_is_history_not_current(hub, runtime):
    now = utcnow()
    async with runtime.db.transaction() as session:
        await fuel.store(
            session,
            [fuel.StationRow("wa-x", "wa", "B", "X", None, "Perth", "WA", None, -31.95, 115.86)],
            [
                fuel.PriceRow("wa-x", "U91", 180.0, now - timedelta(hours=2)),
                fuel.PriceRow("wa-x", "U91", 150.0, now + timedelta(hours=20)),
            ],
        )
    station = await (await hub.get("/api/market/fuel/stations/wa-x")).json()
    assert [p["price"] for p in station["prices"]] == [180.0]
    history = await (await hub.get("/api/market/fuel/history?stationId=wa-x")).json()
    assert [h["price"] for h in history["history"]] == [180.0, 150.0]


async def test_no_transaction_is_held_while_the_feed_downloads(
    hub, runtime, aiohttp_server, settings, monkeypatch
):
    """While the feed's server holds the download open, the job's row is written in a transaction that may
    not wait (tests/lock_probe.py): only possible if the job holds no transaction meanwhile."""
    wrote: list[str] = []

    async def rss(request: web.Request) -> web.Response:
        async with runtime.db.read() as session:
            job_id = await session.scalar(select(OutboxJob.id).where(OutboxJob.actor == "market.fuel_ingest"))
        try:
            await write_now(runtime.db, "outbox_jobs", [job_id])
            wrote.append("ok")
        except Exception as exc:  # the job held a transaction
            wrote.append(f"{type(exc).__name__}: {exc}")
        return web.Response(body=wa_feed(fuelwatch_day()), content_type="application/rss+xml")

    app = web.Application()
    app.router.add_get("/fuelwatch/fuelWatchRSS", rss)
    server = await aiohttp_server(app)
    monkeypatch.setattr(settings, "outbound_allow_private", True)
    monkeypatch.setattr(get_market_settings(), "fuel_wa_url", str(server.make_url("/fuelwatch/fuelWatchRSS")))
    sweep = next(s for s in wiring.SWEEPS if s.name == "market.fuel_ingest")
    assert await sweeps.run(runtime.db, sweep, "test") == 1

    async def ingested():
        body = await (await hub.get("/api/market/fuel/search?state=WA&fuelType=U91")).json()
        return body["count"] == 2 and body

    await eventually(ingested)
    assert wrote == ["ok"]
