"""A topic's standing at depth (run on demand: `python -m bench.topic_standing [--database-url URL]`).

After every merge and done signal, inside the topic's lock, the hub reads the topic's standing (its done
signals, pending proposals, whether one merged, and its distinct authors of proposals not rejected:
domain/topics/lifecycle.py). This fills a scratch database with a small topic (10 proposals) and a deep one
(`--proposals`, default 10,000, by `--authors` agents), 100,000 proposals of other topics around them, and
times the standing of each on one connection, beside the statement as it was before migration 0025 (three
counts over every proposal of the topic) on the same data. Median of `--repeat` calls, alternating;
deep/small is printed.

The scratch database is the one bench/deep_pages.py makes: a temporary SQLite file, or with
`--database-url` (a PostgreSQL server's maintenance database) a database of its own, dropped afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import sqlalchemy as sa

from bench.deep_pages import T0, TABLES, Scratch, bulk_insert, timed
from domain.consensus.models import Proposal
from domain.kernel.db import Database
from domain.topics import lifecycle

SMALL, DEEP = "topic-small", "topic-deep"
STATUSES = ["merged"] * 7 + ["rejected", "superseded", "expired"]


def proposal_rows(topic: str, total: int, authors: int) -> Iterator[dict[str, Any]]:
    for n in range(total):
        yield {
            "id": f"{topic}-{n:08d}",
            "resource_type": "topic",
            "resource_id": topic,
            "section_id": "sec:answer",
            "author_id": f"agent-{n % authors:04d}",
            "author_name": "bench",
            "new_content": "Text of the proposal.",
            "summary": "bench",
            "citations": [],
            "base_version": 1,
            "ttl_seconds": 300,
            "status": STATUSES[n % len(STATUSES)],
            "approve_count": 2,
            "reject_count": 0,
            "object_count": 0,
            "stake": 1,
            "created_at": T0 + timedelta(seconds=n),
            "expires_at": T0 + timedelta(seconds=n + 300),
        }


def _before() -> Any:
    """The statement before migration 0025: every proposal of the topic read three times."""
    topic: Any = sa.bindparam("p_topic")
    of_topic = (Proposal.resource_type == "topic", Proposal.resource_id == topic)

    def count(*where: Any) -> Any:
        return sa.select(sa.func.count()).where(*of_topic, *where).scalar_subquery()

    authors = (
        sa.select(sa.func.count(sa.func.distinct(Proposal.author_id)))
        .where(*of_topic, Proposal.status != "rejected")
        .scalar_subquery()
    )
    return sa.select(count(Proposal.status == "pending"), count(Proposal.status == "merged"), authors)


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", help="PostgreSQL maintenance database URL; default: a SQLite file")
    parser.add_argument("--proposals", type=int, default=10_000, help="proposals of the deep topic")
    parser.add_argument("--authors", type=int, default=20, help="distinct authors of the deep topic")
    parser.add_argument("--others", type=int, default=100_000, help="proposals of 1,000 other topics")
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()

    scratch = Scratch(args.database_url)
    kind = "PostgreSQL" if scratch.is_pg else "SQLite"
    print(f"{kind}: scratch database {scratch.name if scratch.is_pg else scratch.url}", flush=True)
    await scratch.create()
    db = Database(scratch.url)
    table = TABLES["proposals"]
    try:
        await bulk_insert(scratch, db, table, proposal_rows(SMALL, 10, 3))
        await bulk_insert(scratch, db, table, proposal_rows(DEEP, args.proposals, args.authors))
        for n in range(1_000):
            await bulk_insert(scratch, db, table, proposal_rows(f"topic-{n:04d}", args.others // 1_000, 5))
        async with db.engine.begin() as conn:
            await conn.execute(sa.text("ANALYZE"))
        before = _before()
        async with db.read() as session:  # one connection: the statements alone, not the pool around them

            def standing(topic: str) -> Any:
                return lambda: lifecycle._standing(session, topic)

            def old(topic: str) -> Any:
                async def call() -> Any:
                    return (await session.execute(before, {"p_topic": topic})).one()

                return call

            deep_now = await standing(DEEP)()
            live = {
                r["author_id"]
                for r in proposal_rows(DEEP, args.proposals, args.authors)
                if r["status"] != "rejected"
            }
            assert deep_now[4] == len(live), deep_now  # the skip scan counts what a plain count would
            rows = [
                (
                    "standing (ix_proposals_resource_status, _author)",
                    *await timed(standing(SMALL), standing(DEEP), args.repeat),
                ),
                (
                    "before 0025: three counts over the topic's proposals",
                    *await timed(old(SMALL), old(DEEP), args.repeat),
                ),
            ]
        print(
            f"\n{'statement (' + kind + ')':56} {'10 ms':>8} {f'{args.proposals:,} ms':>10}"
            f" {'deep/small':>10}"
        )
        for name, small, deep in rows:
            print(f"{name:56} {small:8.3f} {deep:10.3f} {deep / small:10.2f}")
        print(f"deep topic now against before: {rows[0][2] / rows[1][2]:.3f} of the time")
    finally:
        await db.dispose()
        await scratch.drop()


if __name__ == "__main__":
    asyncio.run(main())
