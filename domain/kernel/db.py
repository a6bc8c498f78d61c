"""Database engine, declarative base and units of work for SQLite (embedded) and PostgreSQL.

SQLite notes: pysqlite's legacy transaction handling is turned off so that every unit of work is a real
transaction; writers open with BEGIN IMMEDIATE, which serialises them (SQLite has no row locks and
drops FOR UPDATE) so a read-modify-write can never interleave. PostgreSQL relies on row locks.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import JSON, BigInteger, DateTime, Integer, MetaData, event
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.pool import NullPool
from sqlalchemy.types import TypeDecorator

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on both databases (SQLite would otherwise drop the offset unconverted)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# Autoincrementing keys: BIGINT on PostgreSQL, INTEGER (the rowid alias) on SQLite.
BigId = BigInteger().with_variant(Integer(), "sqlite")
JSONType = JSON().with_variant(postgresql.JSONB(), "postgresql")


def _install_sqlite_hooks(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _begin(conn: Any) -> None:
        readonly = conn.get_execution_options().get("concord_readonly", False)
        conn.exec_driver_sql("BEGIN" if readonly else "BEGIN IMMEDIATE")


def make_engine(url: str, *, null_pool: bool = False) -> AsyncEngine:
    parsed = make_url(url)
    kwargs: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        kwargs["connect_args"] = {"timeout": 30}
        if not null_pool:
            # A fixed pool: overflow connections would be opened (with their PRAGMAs) and closed per burst.
            kwargs["pool_size"] = 16
            kwargs["max_overflow"] = 0
    else:
        kwargs["pool_pre_ping"] = True
        kwargs["connect_args"] = {"server_settings": {"application_name": "concord"}}
    if null_pool:
        kwargs["poolclass"] = NullPool
    engine = create_async_engine(url, **kwargs)
    if parsed.get_backend_name() == "sqlite":
        _install_sqlite_hooks(engine)
    return engine


class Database:
    """Owns one engine (bound to the event loop that uses it) and hands out units of work."""

    def __init__(self, url: str, *, null_pool: bool = False) -> None:
        self.url = url
        self.engine = make_engine(url, null_pool=null_pool)
        self.is_sqlite = self.engine.dialect.name == "sqlite"
        self._writer = async_sessionmaker(self.engine, expire_on_commit=False)
        self._reader = async_sessionmaker(
            self.engine.execution_options(concord_readonly=True), expire_on_commit=False
        )
        self._after_commit: list[Callable[[AsyncSession], None]] = []

    def on_commit(self, callback: Callable[[AsyncSession], None]) -> None:
        """Run `callback(session)` after every committed write unit of work (e.g. wake the relay)."""
        self._after_commit.append(callback)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A write unit of work: commits on success, rolls back on any error."""
        async with self._writer() as session:
            try:
                yield session
                await session.commit()
            except BaseException:
                await session.rollback()
                raise
        for callback in self._after_commit:
            callback(session)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        """A read-only unit of work (never blocks writers on SQLite)."""
        async with self._reader() as session:
            yield session  # closing releases the connection (and its transaction) without expiring

    async def ping(self, timeout: float = 2.0) -> bool:
        try:
            async with asyncio.timeout(timeout), self.engine.connect() as conn:
                await conn.exec_driver_sql("SELECT 1")
            return True
        except Exception:
            return False

    async def dispose(self) -> None:
        await self.engine.dispose()
