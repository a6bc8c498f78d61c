"""A `limits` moving-window storage in an SQLite file, for the web processes of one machine without Redis.

The supervisor's children would each count in memory and multiply every limit by their number; with this
storage they count in one file (infra/machine.py puts it in the supervisor's directory). Each hit is one
short BEGIN IMMEDIATE transaction, which SQLite serialises across processes, so the count and the insert
are atomic; it runs in a thread (sqlite3 blocks) and only rate-limited operations pay it.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path

from limits.aio.storage import MovingWindowSupport, Storage

INSERT = "INSERT INTO hits (key, at, expires) VALUES (?, ?, ?)"
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS hits (key TEXT NOT NULL, at REAL NOT NULL, expires REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS hits_key_at ON hits (key, at)",
    "CREATE INDEX IF NOT EXISTS hits_expires ON hits (expires)",
)


class SQLiteWindowStorage(Storage, MovingWindowSupport):
    STORAGE_SCHEME = ["concord-sqlite"]

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()  # one connection, used by one thread at a time

    @property
    def base_exceptions(self) -> type[Exception]:
        return sqlite3.Error

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            for statement in SCHEMA:
                conn.execute(statement)
            self._conn = conn
        return self._conn

    def _write(self, statements: list[tuple[str, tuple[object, ...]]]) -> None:
        """Run `statements` in one write transaction."""
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                for sql, params in statements:
                    conn.execute(sql, params)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def _acquire(self, key: str, limit: int, expiry: int, amount: int) -> bool:
        now = time.time()
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("DELETE FROM hits WHERE expires <= ?", (now,))
                (count,) = conn.execute(
                    "SELECT count(*) FROM hits WHERE key = ? AND at > ?", (key, now - expiry)
                ).fetchone()
                allowed = bool(count + amount <= limit)
                if allowed:
                    conn.executemany(INSERT, [(key, now, now + expiry)] * amount)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return allowed

    def _window(self, key: str, expiry: int) -> tuple[float, int]:
        now = time.time()
        with self._lock:
            oldest, count = (
                self._connection()
                .execute("SELECT min(at), count(*) FROM hits WHERE key = ? AND at > ?", (key, now - expiry))
                .fetchone()
            )
        return (oldest if oldest is not None else now), int(count)

    def _scalar(self, sql: str, params: tuple[object, ...]) -> float | None:
        with self._lock:
            row = self._connection().execute(sql, params).fetchone()
        return None if row is None else row[0]

    async def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        if amount > limit:
            return False
        return await asyncio.to_thread(self._acquire, key, limit, expiry, amount)

    async def get_moving_window(self, key: str, limit: int, expiry: int) -> tuple[float, int]:
        return await asyncio.to_thread(self._window, key, expiry)

    # The rest of the storage interface (fixed windows), for completeness: Concord uses moving windows.
    async def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        now = time.time()
        await asyncio.to_thread(self._write, [(INSERT, (key, now, now + expiry))] * amount)
        return await self.get(key)

    async def get(self, key: str) -> int:
        count = await asyncio.to_thread(
            self._scalar, "SELECT count(*) FROM hits WHERE key = ? AND expires > ?", (key, time.time())
        )
        return int(count or 0)

    async def get_expiry(self, key: str) -> float:
        now = time.time()
        latest = await asyncio.to_thread(
            self._scalar, "SELECT max(expires) FROM hits WHERE key = ? AND expires > ?", (key, now)
        )
        return latest if latest is not None else now

    async def check(self) -> bool:
        try:
            await asyncio.to_thread(self._scalar, "SELECT 1", ())
            return True
        except sqlite3.Error:
            return False

    async def reset(self) -> int | None:
        await asyncio.to_thread(self._write, [("DELETE FROM hits", ())])
        return None

    async def clear(self, key: str) -> None:
        await asyncio.to_thread(self._write, [("DELETE FROM hits WHERE key = ?", (key,))])
