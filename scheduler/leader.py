"""One active scheduler: a PostgreSQL advisory lock held on a dedicated connection, or on SQLite a
file lock beside the database. Both are released by the operating system if the process dies."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from domain.kernel.db import Database

LOCK_KEY = 0x0C0C0D  # arbitrary, fixed: identifies "the Concord scheduler"


class LeaderLock:
    def __init__(self, db: Database) -> None:
        self.db = db
        # Beside the database file, so every scheduler sharing that file shares the lock.
        database = db.engine.url.database or "concord.db"
        self.lock_path = Path(database).resolve().with_name(Path(database).name + ".scheduler.lock")
        self._conn: AsyncConnection | None = None
        self._fd: int | None = None

    async def try_acquire(self) -> bool:
        if self.db.is_sqlite:
            return self._try_file()
        conn = await self.db.engine.connect()
        try:
            got = bool(await conn.scalar(text("SELECT pg_try_advisory_lock(:k)"), {"k": LOCK_KEY}))
            await conn.commit()
        except BaseException:
            await conn.close()
            raise
        if got:
            self._conn = conn
        else:
            await conn.close()
        return got

    def _try_file(self) -> bool:
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    async def acquire(self, poll_seconds: float = 2.0) -> None:
        while not await self.try_acquire():
            await asyncio.sleep(poll_seconds)

    async def still_held(self) -> bool:
        if self._conn is None:
            return self._fd is not None
        try:
            await self._conn.scalar(text("SELECT 1"))
            await self._conn.commit()
            return True
        except Exception:
            return False

    async def release(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": LOCK_KEY})
                await self._conn.commit()
            with contextlib.suppress(Exception):
                await self._conn.close()
            self._conn = None
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
                os.close(self._fd)
            self._fd = None
