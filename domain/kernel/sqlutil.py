"""Small portable SQL helpers for the two supported dialects."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ClauseElement, CursorResult, Delete, Executable, Row, Select, Update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session
from sqlalchemy.sql.compiler import SQLCompiler


async def execute_counted(session: AsyncSession, stmt: Update | Delete) -> int:
    """Run an UPDATE or DELETE and return how many rows it matched. The session types its result as a
    plain Result; a DML statement's is a CursorResult, which has the count."""
    result = await session.execute(stmt)
    assert isinstance(result, CursorResult), "a DML statement's result is a CursorResult"
    return result.rowcount or 0


def for_update(stmt: Select[Any], *, skip_locked: bool = False) -> Select[Any]:
    """Row lock on PostgreSQL; on SQLite the writer's BEGIN IMMEDIATE already serialises.

    populate_existing: a row already in the session (loaded before the lock was granted) is refreshed
    with the committed values the lock sees; without it the identity map keeps the stale attributes and
    a read-modify-write (a section merge) would silently undo another transaction's commit.

    FOR NO KEY UPDATE (key_share): lockers still exclude each other, but a foreign-key check from
    another transaction (inserting a row that references the locked one) is not blocked, which would
    otherwise let two writers each hold one row and wait on the other's.

    skip_locked: rows another transaction holds are passed over instead of waited for (a queue's
    consumers taking different rows).
    """
    return stmt.with_for_update(key_share=True, skip_locked=skip_locked).execution_options(
        populate_existing=True
    )


def on_postgresql(session: AsyncSession | Session) -> bool:
    """Whether the session speaks to PostgreSQL (else SQLite, the other supported dialect)."""
    bind = session.get_bind()
    return bool(bind.dialect.name == "postgresql")


def insert(session: AsyncSession | Session, target: Any) -> Any:
    """An INSERT in the session's dialect, which can say ON CONFLICT (`on_conflict_do_nothing`,
    `on_conflict_do_update`: both dialects write them alike)."""
    return (postgresql if on_postgresql(session) else sqlite).insert(target)


_ASYNCPG = PGDialect_asyncpg()  # type: ignore[no-untyped-call]  # SQLAlchemy leaves it untyped


@dataclass(frozen=True)
class DriverStatement:
    """A statement compiled once for asyncpg ($n placeholders, its parameter names in their order,
    the values it binds itself) and sent as the driver's SQL: no compile-cache lookup or parameter processing
    on each execution, about a quarter of a million instructions a statement (bench/README.md, "Statements
    compiled once"). SQLAlchemy still runs it (its connection, events, errors and invalidation); values go
    to asyncpg as given and rows come back as it decodes them, so a statement whose columns need SQLAlchemy's
    type processing (naive datetimes, JSON as text) does not belong here. The session's pending changes are
    flushed first, as `Session.execute` does (unless in `no_autoflush`); an expanding IN (a POSTCOMPILE
    parameter) is refused, since it is rendered per execution. On SQLite the statement runs as it is,
    through the session."""

    statement: Executable  # run as it is where the database is SQLite
    sql: str
    names: tuple[str, ...]
    fixed: Mapping[str, Any]  # the values the statement binds itself (literals in its expressions)

    @classmethod
    def of(cls, statement: Executable) -> DriverStatement:
        assert isinstance(statement, ClauseElement)
        compiled = statement.compile(dialect=_ASYNCPG)
        assert isinstance(compiled, SQLCompiler)
        if "POSTCOMPILE" in compiled.string:
            raise ValueError("an expanding IN is rendered per execution: write it as = ANY(:array)")
        names = tuple(compiled.positiontup or ())
        binds = compiled.binds
        fixed = {name: binds[name].effective_value for name in names if not binds[name].required}
        return cls(statement, compiled.string, names, fixed)

    def _values(self, params: Mapping[str, Any]) -> tuple[Any, ...]:
        fixed = self.fixed
        return tuple(fixed[name] if name in fixed else params[name] for name in self.names)

    def one(self, session: Session, params: Mapping[str, Any]) -> Row[*tuple[Any, ...]]:
        """The statement's only row, run in the session's transaction (a sync session: a unit of work's
        finisher)."""
        if not on_postgresql(session):
            return session.execute(self.statement, params).one()
        return self._run(session, params).one()

    async def all(self, session: AsyncSession, params: Mapping[str, Any]) -> Sequence[Row[*tuple[Any, ...]]]:
        """The statement's rows, run in the session's transaction."""
        if not on_postgresql(session):
            return (await session.execute(self.statement, params)).all()
        # One pass into the session's synchronous side (a greenlet) for the flush, the connection and the
        # statement, where awaiting each of the three through the async session took one apiece.
        return await session.run_sync(lambda sync: self._run(sync, params).all())

    def _run(self, session: Session, params: Mapping[str, Any]) -> CursorResult[Any]:
        if session.autoflush:  # as Session.execute does before any statement
            session.flush()
        return session.connection().exec_driver_sql(self.sql, self._values(params))
