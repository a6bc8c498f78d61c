"""`concord fuel ingest --source nsw|wa FILE_OR_URL`: one ingestion run from the command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from domain.kernel.db import Database
from domain.kernel.settings import Settings
from domain.market import fuel_ingest


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    fuel = sub.add_parser("fuel", help="fuel price feeds")
    actions = fuel.add_subparsers(dest="fuel_command", required=True)
    ingest = actions.add_parser("ingest", help="ingest a NSW FuelCheck or WA FuelWatch feed")
    ingest.add_argument("--source", choices=fuel_ingest.SOURCES, required=True, help="feed shape")
    ingest.add_argument("--fuel-type", help="WA only: fuel type of the feed (default: its Product, else U91)")
    ingest.add_argument("location", help="file path or http(s) URL")


def run(settings: Settings, args: argparse.Namespace) -> int:
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
