"""Axiom's operator commands: `concord axiom keys list` (every commercial key with its tier and this
period's usage, never a secret) and `concord axiom keys set-tier KEY_ID TIER` (issue a tier the discovery
document lists: the key's monthly credits become the tier's at once, audited)."""

from __future__ import annotations

import argparse
import asyncio
import json

from domain.axiom import keys
from domain.kernel.commands import with_database
from domain.kernel.context import SYSTEM
from domain.kernel.db import Database
from domain.kernel.settings import Settings


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    axiom = sub.add_parser("axiom", help="Axiom commercial keys")
    areas = axiom.add_subparsers(dest="axiom_command", required=True)
    keys_cmd = areas.add_parser("keys", help="commercial (pact_ax_) keys")
    actions = keys_cmd.add_subparsers(dest="axiom_keys_command", required=True)
    actions.add_parser("list", help="list commercial keys with tier and usage (one JSON object a line)")
    set_tier = actions.add_parser(
        "set-tier", help="move a key to a tier; its monthly credits become the tier's at once"
    )
    set_tier.add_argument("key_id", metavar="KEY_ID", help="the key's id (keyId; see `list`)")
    set_tier.add_argument("tier", metavar="TIER", help=f"one of {', '.join(keys.TIERS)}")


def run(settings: Settings, args: argparse.Namespace) -> int:
    return asyncio.run(_keys(settings, args))


async def _keys(settings: Settings, args: argparse.Namespace) -> int:
    async def work(db: Database) -> None:
        if args.axiom_keys_command == "set-tier":
            async with db.transaction() as session:
                change = await keys.set_tier(session, SYSTEM, args.key_id, args.tier)
                before = change.before
                print(
                    json.dumps(
                        {
                            **change.after,
                            "previousTier": before["tier"],
                            "previousMonthlyCredits": before["monthlyCredits"],
                        }
                    )
                )
        else:
            async with db.read() as session:
                for row in await keys.list_keys(session):
                    print(json.dumps(row))

    return await with_database(settings, work)
