"""Small portable SQL helpers for the two supported dialects."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import CursorResult, Delete, Row, Select, TextClause, Update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session


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
    """A PostgreSQL statement compiled once for asyncpg ($n placeholders, its parameter names in their order)
    and sent as the driver's SQL: no compile-cache lookup or parameter processing on each execution, which
    for a statement of some thirty parameters run several times a request is a few percent of a write's CPU
    (bench/README.md). SQLAlchemy still runs it (its connection, events, errors and invalidation); values go
    to asyncpg as given, so a parameter needs no SQLAlchemy type processing, and the rows come back as the
    driver decodes them."""

    sql: str
    names: tuple[str, ...]

    @classmethod
    def of(cls, statement: TextClause) -> DriverStatement:
        compiled = statement.compile(dialect=_ASYNCPG)
        return cls(compiled.string, tuple(compiled.positiontup or ()))

    def one(self, session: Session, params: Mapping[str, Any]) -> Row[Any]:
        """The statement's only row, run in the session's transaction (a sync session: a unit of work's
        finisher)."""
        values = tuple(params[name] for name in self.names)
        return session.connection().exec_driver_sql(self.sql, values).one()
