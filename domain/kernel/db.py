"""Database engine, declarative base and units of work for SQLite (embedded) and PostgreSQL.

SQLite notes: pysqlite's legacy transaction handling is turned off so that every unit of work is a real
transaction; writers open with BEGIN IMMEDIATE, which serialises them (SQLite has no row locks and
drops FOR UPDATE) so a read-modify-write can never interleave. PostgreSQL relies on row locks.

Writes that need no answer before the commit (events, audit entries, wallet balances) are queued on the
unit of work and written together just before it commits (`before_commit`): fewer round trips, and the
row locks they take (event streams, wallets) are the last a transaction takes, each kind in one global
order, so they can never close a wait cycle with the resource locks taken earlier.

A request's unit of work may be opened by its access guard, so the caller's key is looked up inside the
transaction that then does the work (`request_unit`, `guard_session`): no separate transaction for it.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import JSON, BigInteger, DateTime, Integer, MetaData, Table, event
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.orm import DeclarativeBase, Session
from sqlalchemy.pool import NullPool
from sqlalchemy.types import TypeDecorator

from domain.kernel.errors import Unavailable

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


def table_of(model: type[Base]) -> Table:
    """A model's Table, for Core statements (no ORM bookkeeping) on the hot write path."""
    found = model.__table__
    assert isinstance(found, Table)
    return found


# Autoincrementing keys: BIGINT on PostgreSQL, INTEGER (the rowid alias) on SQLite.
BigId = BigInteger().with_variant(Integer(), "sqlite")
JSONType = JSON().with_variant(postgresql.JSONB(), "postgresql")


class _SQLiteConnection(sqlite3.Connection):
    """Closing ends the connection's transaction first. SQLite closes a connection that still has an
    unfinished statement (its cursor still referenced, as by a cancelled task's traceback) as a zombie that
    keeps its transaction, and with it the database's write lock, until the garbage collector finalizes
    that cursor; every writer of the database waited out its busy timeout meanwhile. SQLAlchemy closes a
    connection so when a task is cancelled inside a unit of work (a relay stopped mid-claim, a job cut
    off by its time limit)."""

    def close(self) -> None:
        if self.in_transaction:
            try:
                self.rollback()
            except sqlite3.Error:
                pass  # closing is what matters; it ends the transaction once the statement is finalized
        super().close()


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


def _install_postgresql_hooks(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "checkout")
    def _checkout(dbapi_conn: Any, _record: Any, _proxy: Any) -> None:
        # Instead of pool_pre_ping (a round trip per checkout): asyncpg's protocol sees the server close an
        # idle connection (restart, pg_terminate_backend, idle timeout) as it happens, so a closed one is
        # known without asking the server; raising here makes the pool discard it and check out another.
        if dbapi_conn.driver_connection.is_closed():
            raise DisconnectionError("connection closed by the server while idle in the pool")


# SQLSTATE classes that mean the server cannot serve now, whatever the statement: connection exception,
# insufficient resources (too many connections, disk full), operator intervention (shutdown, recovery).
_UNAVAILABLE_CLASSES = ("08", "53", "57")


def unavailable(exc: BaseException) -> Unavailable | None:
    """The 503 to answer when `exc` says the database cannot serve just now (no connection could be made,
    every pooled connection is busy, the connection was lost, SQLite stayed locked past its busy timeout),
    else None: the request may succeed if retried, so a client is told to retry rather than shown a 500."""
    if isinstance(exc, PoolTimeout):
        return Unavailable("every database connection is busy; try again shortly", retry_after=1)
    if not isinstance(exc, DBAPIError):
        return None
    sqlstate = str(getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None) or "")
    if (
        exc.statement is None  # raised while connecting: no statement was sent
        or exc.connection_invalidated
        or sqlstate[:2] in _UNAVAILABLE_CLASSES
    ):
        return Unavailable(
            "the database is not accepting connections just now; try again shortly", retry_after=2
        )
    if "database is locked" in str(exc.orig):
        return Unavailable("the database is busy; try again shortly", retry_after=1)
    return None


def make_engine(
    url: str, *, null_pool: bool = False, pool_size: int = 25, max_overflow: int = 0
) -> AsyncEngine:
    parsed = make_url(url)
    kwargs: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        kwargs["connect_args"] = {"timeout": 30, "factory": _SQLiteConnection}
        if not null_pool:
            # A fixed pool: overflow connections would be opened (with their PRAGMAs) and closed per burst.
            kwargs["pool_size"] = 16
            kwargs["max_overflow"] = 0
    else:
        # No pool_pre_ping: see _install_postgresql_hooks. pool_recycle bounds a connection's age, so one
        # silently dropped by a middlebox (no FIN ever seen) is replaced within the hour; an error on a dead
        # connection invalidates the whole pool, so at most the requests already using one fail.
        kwargs["pool_recycle"] = 3600
        # Kept open (settings db_pool_size, db_max_overflow): a request beyond the pool opens an overflow
        # connection (a PostgreSQL backend forked, a TLS offer refused, several round trips) and closes it on
        # return. With 10 + 20, 32 concurrent uncached reads per process spent two thirds of their CPU doing
        # that; with 20 + 5 64 clients over two processes still churned. So the default is 25 kept open and no
        # overflow: the same ceiling (a 2-core machine's processes stay under PostgreSQL's default 100
        # connections), and a request beyond it waits for a connection instead of opening one.
        if not null_pool:
            kwargs["pool_size"] = pool_size
            kwargs["max_overflow"] = max_overflow
        kwargs["connect_args"] = {"server_settings": {"application_name": "concord"}}
    if null_pool:
        kwargs["poolclass"] = NullPool
    engine = create_async_engine(url, **kwargs)
    if parsed.get_backend_name() == "sqlite":
        _install_sqlite_hooks(engine)
    elif engine.dialect.driver == "asyncpg":
        _install_postgresql_hooks(engine)
    return engine


# Work queued on a unit of work, written just before it commits: (order, key) -> fn(session).
Finisher = Callable[[Session], object]
_FINISHERS = "concord_before_commit"
_AFTER_COMMIT = "concord_after_commit"
_UNIT = "concord_unit"
# A per-Database dict shared by all its sessions (`session.info[SHARED]`), for immutable lookups (wallet ids).
SHARED = "concord_shared"


class UnitOfWorkSession(Session):
    """The sessions of a Database: they run the finishers queued on them before committing."""


def _commit_and_close(session: Session) -> None:
    """A unit of work's end in one pass into the session's synchronous side (AsyncSession's commit, then its
    exit's close, took a greenlet each and the close a task of its own). Once the COMMIT has answered, the
    close does no I/O (the connection goes back to the pool with no transaction to roll back), so no
    cancellation can stop it halfway."""
    session.commit()
    session.close()


@event.listens_for(UnitOfWorkSession, "before_commit")
def _run_finishers(session: Session) -> None:
    # Everything the ORM holds first, so that no row lock is taken after the finishers' ordered ones.
    session.flush()
    while session.info.get(_FINISHERS):
        finishers: dict[tuple[int, str], Finisher] = session.info.pop(_FINISHERS)
        for key in sorted(finishers):
            finishers[key](session)


@event.listens_for(UnitOfWorkSession, "after_commit")
def _run_after_commit(session: Session) -> None:
    for fn in session.info.pop(_AFTER_COMMIT, {}).values():
        fn(session)
    session.info.pop(_UNIT, None)


@event.listens_for(UnitOfWorkSession, "after_soft_rollback")
def _forget_queued(session: Session, _previous: Any) -> None:
    for key in (_FINISHERS, _AFTER_COMMIT, _UNIT):
        session.info.pop(key, None)


def unit_state(session: AsyncSession | Session) -> dict[str, Any]:
    """State of the current unit of work (what its finishers will write), dropped at commit or rollback."""
    found: dict[str, Any] = session.info.setdefault(_UNIT, {})
    return found


def before_commit(session: AsyncSession | Session, order: int, key: str, fn: Finisher) -> None:
    """Run `fn(session)` (synchronous SQLAlchemy; it may execute statements) once just before the unit of
    work commits. Lower `order` first: the kernel's journal (events, audit, ledger) uses 10."""
    info = session.info
    info.setdefault(_FINISHERS, {}).setdefault((order, key), fn)


def after_commit(session: AsyncSession | Session, key: str, fn: Callable[[Session], None]) -> None:
    """Run `fn(session)` once after the unit of work committed (never after a rollback)."""
    session.info.setdefault(_AFTER_COMMIT, {}).setdefault(key, fn)


def shared(session: AsyncSession | Session) -> dict[str, Any]:
    """The dict every session of the session's Database shares (empty for a foreign session)."""
    found: dict[str, Any] = session.info.setdefault(SHARED, {})
    return found


@dataclass
class _RequestUnit:
    """A request's unit of work, opened early by its guard and adopted by its first `transaction()`."""

    db: Database
    session: AsyncSession | None = None
    adopted: bool = False


_request_unit: ContextVar[_RequestUnit | None] = ContextVar("concord_request_unit", default=None)


class Database:
    """Owns one engine (bound to the event loop that uses it) and hands out units of work."""

    def __init__(
        self, url: str, *, null_pool: bool = False, pool_size: int = 25, max_overflow: int = 0
    ) -> None:
        self.url = url
        self.engine = make_engine(url, null_pool=null_pool, pool_size=pool_size, max_overflow=max_overflow)
        self.is_sqlite = self.engine.dialect.name == "sqlite"
        self.shared: dict[str, Any] = {}
        options: dict[str, Any] = {
            "expire_on_commit": False,
            "sync_session_class": UnitOfWorkSession,
            "info": {SHARED: self.shared},
        }
        self._writer = async_sessionmaker(self.engine, **options)
        # PostgreSQL reads run in autocommit: at READ COMMITTED each statement takes its own snapshot inside a
        # transaction too, so BEGIN and ROLLBACK (two round trips per read) bought no consistency. SQLite
        # reads stay in a transaction: there it is one snapshot for the whole read.
        reading: dict[str, Any] = {"concord_readonly": True}
        if not self.is_sqlite:
            reading["isolation_level"] = "AUTOCOMMIT"
        self._read_engine = self.engine.execution_options(**reading)
        self._reader = async_sessionmaker(self._read_engine, **options)
        self._autocommit = async_sessionmaker(
            self.engine.execution_options(isolation_level="AUTOCOMMIT"), **options
        )
        self._after_commit: list[Callable[[AsyncSession], None]] = []

    def on_commit(self, callback: Callable[[AsyncSession], None]) -> None:
        """Run `callback(session)` after every committed write unit of work (e.g. wake the relay)."""
        self._after_commit.append(callback)

    def off_commit(self, callback: Callable[[AsyncSession], None]) -> None:
        """Stop running `callback` after commits (a runtime stopping on a Database it does not own)."""
        if callback in self._after_commit:
            self._after_commit.remove(callback)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A write unit of work: commits on success, rolls back on any error. Inside a request whose guard
        opened the request's unit of work, the first one is that unit (the key lookup already in it)."""
        unit = _request_unit.get()
        if unit is not None and unit.db is self and unit.session is not None and not unit.adopted:
            unit.adopted = True
            session = unit.session
        else:
            session = self._writer()
        try:
            yield session
            await session.run_sync(_commit_and_close)
        except BaseException:
            async with session:  # closed on the way out, even if this task is cancelled meanwhile
                await session.rollback()
            raise
        for callback in self._after_commit:
            callback(session)

    @asynccontextmanager
    async def request_unit(self) -> AsyncIterator[None]:
        """The scope of one request: a guard may open its unit of work (`guard_session`), which the first
        `transaction()` of the request adopts; one nobody adopted is closed (rolled back) at the end."""
        unit = _RequestUnit(self)
        token = _request_unit.set(unit)
        try:
            yield
        finally:
            _request_unit.reset(token)
            if unit.session is not None and not unit.adopted:
                await unit.session.close()

    @asynccontextmanager
    async def guard_session(self, *, write: bool) -> AsyncIterator[AsyncSession]:
        """Where a guard looks up a key: with `write` (a request that will write and whose body has fully
        arrived) the request's own unit of work, opened here; otherwise a short read of its own."""
        unit = _request_unit.get()
        if write and unit is not None and unit.db is self and not unit.adopted:
            if unit.session is None:
                unit.session = self._writer()
            yield unit.session
            return
        async with self.read() as session:
            yield session

    @asynccontextmanager
    async def single_statement(self) -> AsyncIterator[AsyncSession]:
        """For one statement that is atomic on its own: on PostgreSQL in autocommit (no BEGIN and COMMIT
        round trips); on SQLite a write unit of work as any other."""
        async with (self._writer if self.is_sqlite else self._autocommit)() as session:
            try:
                yield session
                await session.commit()
            except BaseException:
                await session.rollback()
                raise

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        """A read-only unit of work (never blocks writers on SQLite)."""
        async with self._reader() as session:
            yield session  # closing releases the connection (and its transaction) without expiring

    @asynccontextmanager
    async def read_connection(self) -> AsyncIterator[AsyncConnection]:
        """A read on a pooled connection alone, for Core statements (the hub's hottest reads): no ORM session
        is built and closed around it (13% of an uncached read's CPU on PostgreSQL). The same isolation as
        `read`: autocommit on PostgreSQL, one read transaction (a snapshot) on SQLite."""
        async with self._read_engine.connect() as conn:
            yield conn  # closing rolls back what SQLite began and returns the connection to the pool

    async def ping(self, timeout: float = 2.0) -> bool:
        """Whether the database answers. A read: on SQLite a writer's BEGIN IMMEDIATE queued behind any
        write holding the lock (up to the 30 s busy timeout, which no asyncio timeout interrupts), and a
        busy database read as an unreachable one."""
        try:
            async with asyncio.timeout(timeout), self._read_engine.connect() as conn:
                await conn.exec_driver_sql("SELECT 1")
            return True
        except Exception:
            return False

    def forget_cached(self) -> None:
        """Drop what the sessions remember across units of work (tests that empty every table use it)."""
        self.shared.clear()

    async def dispose(self) -> None:
        await self.engine.dispose()
