"""Query plans of the statements a request really runs: capture them off the engine, EXPLAIN them on the
same database, and say which ones read a whole table or sort their rows instead of reading an index in
order. Used by tests/test_query_plans.py (on the tests' tiny tables) and bench/deep_pages.py (at scale)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from domain.kernel.db import Database

# A table read from end to end without an index, or rows sorted after they were read: what a deep page must
# not cost. SQLite says SCAN for an index read in order without a range ("SCAN t USING INDEX i"), which
# stops with the page; a bare "SCAN t" reads the table. A sort of ties only (SQLite's "TEMP B-TREE FOR
# RIGHT PART OF ORDER BY", PostgreSQL's Incremental Sort) keeps the index's order and stops with the page
# too: it sorts the rows sharing one created_at by their id.
SQLITE_BAD = re.compile(r"^(SCAN (?!CONSTANT ROW)\S+$|USE TEMP B-TREE FOR ORDER BY)")
PG_BAD = re.compile(r"(Seq Scan on \S+|(?:^|->\s+)Sort\s+\()")


@contextmanager
def captured(engine: AsyncEngine) -> Iterator[list[tuple[str, Any]]]:
    """The (statement, parameters) of every statement the engine runs inside the block."""
    seen: list[tuple[str, Any]] = []

    def hook(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool) -> None:
        seen.append((statement, parameters))

    event.listen(engine.sync_engine, "before_cursor_execute", hook)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", hook)


async def explain(db: Database, statement: str, parameters: Any, *, strict: bool = True) -> list[str]:
    """The plan's lines. `strict` (PostgreSQL): sequential scans and sorts are priced out, so on a tiny
    table the planner still takes an index that serves the filter and order, and shows a scan or a sort
    only where no index can (on a tiny table it would otherwise rightly prefer a scan)."""
    async with db.engine.connect() as conn:
        if db.is_sqlite:
            rows = await conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
            return [str(r[-1]) for r in rows]
        if strict:
            for setting in ("enable_seqscan", "enable_sort", "enable_bitmapscan"):
                await conn.exec_driver_sql(f"SET LOCAL {setting} = off")
        rows = await conn.exec_driver_sql("EXPLAIN " + statement, parameters)
        lines = [str(r[0]) for r in rows]
        await conn.rollback()
        return lines


def bad_steps(db: Database, plan: list[str]) -> list[str]:
    """The plan's lines that read a table without an index or sort rows."""
    pattern = SQLITE_BAD if db.is_sqlite else PG_BAD
    return [line for line in plan if pattern.search(line.strip())]


def seeks_on(db: Database, plan: list[str], column: str) -> bool:
    """Whether the index range itself starts at a cursor on `column` (a keyset page seeks to its position
    instead of reading from the first entry and filtering the ones before it away)."""
    bound = re.compile(rf"\b{re.escape(column)}\)?\s*[<>]")
    if db.is_sqlite:
        return any(line.startswith("SEARCH ") and bound.search(line) for line in plan)
    return any("Index Cond:" in line and bound.search(line) for line in plan)
