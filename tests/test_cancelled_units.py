"""A unit of work cancelled at any point (a request's task cancelled at shutdown or by a timeout) leaves the
database writable at once: nothing it began keeps a lock.

On SQLite this failed before the connection's close ended its transaction: SQLAlchemy closes a connection
whose task was cancelled mid-statement, SQLite turns a connection closed with an unfinished statement into
a zombie that keeps its transaction, and the database's write lock stayed held until the garbage collector
happened to finalize the statement's cursor. Every writer of the database waited out its 30 s busy timeout
meanwhile (seen as a rare `database is locked` in the full suite)."""

from __future__ import annotations

import asyncio
import random
import sqlite3
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.pool import QueuePool

from domain.kernel.db import Database
from tests.conftest import PG_ADMIN_URL, TMP

ATTEMPTS = 150


@pytest.fixture(params=["sqlite", "postgresql"])
async def db(request: pytest.FixtureRequest) -> AsyncIterator[Database]:
    if request.param == "sqlite":
        handle = Database(f"sqlite+aiosqlite:///{TMP / f'cancel-{uuid.uuid4().hex[:8]}.db'}")
    elif PG_ADMIN_URL:
        from domain.kernel.settings import get_settings

        handle = Database(get_settings().db_url)
    else:
        pytest.skip("PostgreSQL case: CONCORD_TEST_DATABASE_URL is not set")
    async with handle.transaction() as session:
        await session.execute(text("CREATE TABLE cancel_probe (id INTEGER PRIMARY KEY, v INTEGER)"))
        await session.execute(text("INSERT INTO cancel_probe (id, v) VALUES (1, 0)"))
    yield handle
    async with handle.transaction() as session:
        await session.execute(text("DROP TABLE cancel_probe"))
    await handle.dispose()


async def _unit(db: Database, n: int) -> None:
    async with db.transaction() as session:
        await session.execute(text("UPDATE cancel_probe SET v = v + 1 WHERE id = 1"))
        await session.execute(text("INSERT INTO cancel_probe (id, v) VALUES (:id, 0)"), {"id": 100 + n})
        for _ in range(3):  # reads after the writes: a cancellation can land with a statement unfinished
            await session.execute(text("SELECT count(*) FROM cancel_probe"))


async def _can_write(db: Database) -> bool:
    """Whether another writer gets the lock within a second (a leaked one is held indefinitely)."""
    if db.is_sqlite:
        path = Path(db.engine.url.database or "")

        def try_lock() -> bool:
            conn = sqlite3.connect(path, timeout=1.0, isolation_level=None)
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("UPDATE cancel_probe SET v = v WHERE id = 1")
                conn.execute("ROLLBACK")
                return True
            except sqlite3.OperationalError:
                return False
            finally:
                conn.close()

        return await asyncio.to_thread(try_lock)
    async with db.transaction() as session:
        await session.execute(text("SET LOCAL lock_timeout = '1s'"))
        try:
            await session.execute(text("SELECT v FROM cancel_probe WHERE id = 1 FOR UPDATE"))
        except Exception:
            return False
    return True


async def test_a_cancelled_unit_of_work_leaves_the_database_writable(db: Database) -> None:
    rng = random.Random(20261124)
    leaks = []
    for n in range(ATTEMPTS):
        task = asyncio.create_task(_unit(db, n))
        # Cancel at varied points: after some loop steps, and at times between the driver's replies.
        for _ in range(n % 12):
            await asyncio.sleep(0)
        if n % 3:
            await asyncio.sleep(rng.random() * 0.003)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        await asyncio.sleep(0.005)  # the driver's own thread finishes what was queued
        if not await _can_write(db):
            leaks.append(n)
            if len(leaks) == 3:
                break
    assert not leaks, f"after cancelled units {leaks} another writer could not get the lock within 1 s"
    pool = db.engine.pool
    assert isinstance(pool, QueuePool)
    assert pool.checkedout() == 0
