"""The market's operator commands: `concord fuel ingest --source nsw|wa FILE_OR_URL` (one ingestion
run) and `concord market retailers add|list` (retailers as reference data)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from domain.kernel.commands import with_database
from domain.kernel.context import SYSTEM
from domain.kernel.db import Database
from domain.kernel.settings import Settings
from domain.market.fuel import FuelFeed


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    fuel = sub.add_parser("fuel", help="fuel price feeds")
    actions = fuel.add_subparsers(dest="fuel_command", required=True)
    ingest = actions.add_parser("ingest", help="ingest a NSW FuelCheck or WA FuelWatch feed")
    ingest.add_argument("--source", choices=[f.value for f in FuelFeed], required=True, help="feed shape")
    ingest.add_argument("--fuel-type", help="WA only: fuel type of the feed (default: its Product, else U91)")
    ingest.add_argument("location", help="file path or http(s) URL")

    market = sub.add_parser("market", help="market reference data")
    areas = market.add_subparsers(dest="market_command", required=True)
    retailer_cmd = areas.add_parser("retailers", help="retailers whose product pages the market accepts")
    retailer_actions = retailer_cmd.add_subparsers(dest="retailers_command", required=True)
    add = retailer_actions.add_parser("add", help="add a retailer")
    add.add_argument("--slug", required=True, help="its id: 2 to 64 of a-z, 0-9 and '-'")
    add.add_argument("--name", required=True, help="its display name (2 to 200 characters)")
    add.add_argument(
        "--domain",
        required=True,
        help="its web host, bare or as a URL (only the host is kept); its subdomains belong to it too",
    )
    retailer_actions.add_parser("list", help="list retailers (one JSON object a line)")


def run(settings: Settings, args: argparse.Namespace) -> int:
    if args.command == "market":
        return asyncio.run(_retailers(settings, args))
    return _fuel(settings, args)


def _fuel(settings: Settings, args: argparse.Namespace) -> int:
    from domain.market import fuel_ingest  # the feeds' parsers and HTTP client: only this command needs them

    async def go() -> fuel_ingest.Report:
        db = Database(settings.db_url)
        try:
            return await fuel_ingest.ingest(db, args.source, args.location, fuel_type=args.fuel_type)
        finally:
            await db.dispose()

    try:
        report = asyncio.run(go())
    except (fuel_ingest.IngestError, ValueError) as exc:
        print(f"fuel ingest failed: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(report.as_dict(), indent=2))
    return 0


async def _retailers(settings: Settings, args: argparse.Namespace) -> int:
    from domain.market import retailers

    async def work(db: Database) -> None:
        if args.retailers_command == "add":
            async with db.transaction() as session:
                added = await retailers.add_retailer(
                    session, SYSTEM, slug=args.slug, name=args.name, domain=args.domain
                )
            print(json.dumps(added))
        else:
            async with db.read() as session:
                for row in await retailers.list_retailers(session):
                    print(json.dumps(row))

    return await with_database(settings, work)
