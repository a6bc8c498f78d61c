"""The event log's operator commands:

- `concord events verify RESOURCE… | --all [--trust DID_KEY…]` recomputes each stream's hash chain from the
  database (domain/kernel/event_verify.py) and prints one JSON line per stream; a break is also named on
  standard error, and the exit status is 1 when any stream has one.
- `concord events root RESOURCE…` signs a `pact.log.root` over each stream's events since its last root
  now, and prints the root event as the events API serves it.

RESOURCE is a stream, `topic:<id>`, `document:<id>` or `work:<agent id>`, or an id alone when only one
stream has it. An unknown one is a refusal (exit status 2).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import event_verify, events, log_roots
from domain.kernel.commands import with_database
from domain.kernel.db import Database
from domain.kernel.errors import BadRequest
from domain.kernel.event_record import ENTITY_TYPES
from domain.kernel.models import Event, EventStream
from domain.kernel.settings import Settings

BROKEN = 1


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = sub.add_parser("events", help="the event log: verify its hash chains, sign roots")
    actions = cmd.add_subparsers(dest="events_command", required=True)
    verify = actions.add_parser(
        "verify", help="recompute streams' hash chains and signed roots; name the first break (exit 1)"
    )
    verify.add_argument(
        "resources", nargs="*", metavar="RESOURCE", help="topic:<id>, document:<id>, work:<id>, or an id"
    )
    verify.add_argument("--all", action="store_true", help="every stream")
    verify.add_argument(
        "--trust",
        action="append",
        default=[],
        metavar="DID_KEY",
        help="also accept roots signed by this did:key (an earlier log signing key); repeatable",
    )
    root = actions.add_parser("root", help="sign a pact.log.root over each stream's events since its last")
    root.add_argument("resources", nargs="+", metavar="RESOURCE", help="topic:<id>, document:<id>, or an id")


async def resolve(session: AsyncSession, resource: str) -> str:
    """The stream a RESOURCE argument names (BadRequest when none, or several, do)."""
    resource = resource.strip()
    kind, sep, _rest = resource.partition(":")
    candidates = (
        [resource] if sep and kind in ENTITY_TYPES else [events.stream_of(k, resource) for k in ENTITY_TYPES]
    )
    found = (
        await session.scalars(select(EventStream.stream).where(EventStream.stream.in_(candidates)))
    ).all()
    if not found:
        raise BadRequest(f"no event stream for {resource!r} (give topic:<id>, document:<id> or work:<id>)")
    if len(found) > 1:
        raise BadRequest(f"{resource!r} names several streams: {', '.join(sorted(found))}; give one of them")
    return found[0]


async def _verify(db: Database, args: argparse.Namespace) -> int:
    if not args.all and not args.resources:
        raise BadRequest("name the streams to verify (RESOURCE …) or give --all")
    async with db.read() as session:
        if args.all:
            streams = list(
                (await session.scalars(select(EventStream.stream).order_by(EventStream.stream))).all()
            )
        else:
            streams = [await resolve(session, r) for r in args.resources]
    broken = 0
    for stream in streams:
        async with db.read() as session:
            report = await event_verify.verify(session, stream, trusted_keys=args.trust)
        print(json.dumps(report.summary()))
        if report.first_break is not None:
            broken += 1
            print(
                f"{stream}: the chain breaks at event {report.first_break.seq}: {report.first_break.reason}",
                file=sys.stderr,
            )
    return BROKEN if broken else 0


async def _root(db: Database, args: argparse.Namespace) -> None:
    for resource in args.resources:
        async with db.transaction() as session:
            stream = await resolve(session, resource)
            root = await log_roots.sign_now(session, stream)
            if root is None:
                print(f"{stream}: no events since its last root; nothing to sign", file=sys.stderr)
                continue
            event = await session.scalar(select(Event).where(Event.stream == stream, Event.seq == root.seq))
            assert event is not None
            print(json.dumps(events.to_dict(event)))


def run(settings: Settings, args: argparse.Namespace) -> int:
    outcome = 0

    async def work(db: Database) -> None:
        nonlocal outcome
        if args.events_command == "verify":
            outcome = await _verify(db, args)
        else:
            await _root(db, args)

    status = asyncio.run(with_database(settings, work))
    return status or outcome
