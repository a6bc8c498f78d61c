"""A write that must not wait: what a test does while a job is waiting on another service, to show that the
job holds no transaction then. On PostgreSQL the rows are locked with NOWAIT (an error at once if any
transaction holds them); on SQLite a connection of its own takes the single write lock with a busy timeout
of one second (`database is locked` if a transaction of the job held it meanwhile)."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

from sqlalchemy import text

from domain.kernel.db import Database


async def write_now(db: Database, table: str, ids: list[Any]) -> None:
    """Rewrite the rows `ids` of `table` (each row's id onto itself) in a transaction that may not wait."""
    if db.is_sqlite:
        path = db.engine.url.database
        assert path

        def write() -> None:
            conn = sqlite3.connect(path, timeout=1.0, isolation_level=None)
            try:
                conn.execute("BEGIN IMMEDIATE")
                for row_id in ids:
                    conn.execute(f"UPDATE {table} SET id = id WHERE id = ?", (row_id,))
                conn.execute("COMMIT")
            finally:
                conn.close()

        await asyncio.to_thread(write)
        return
    async with db.transaction() as session:
        for row_id in ids:
            await session.execute(
                text(f"SELECT id FROM {table} WHERE id = :id FOR UPDATE NOWAIT"), {"id": row_id}
            )
            await session.execute(text(f"UPDATE {table} SET id = id WHERE id = :id"), {"id": row_id})
