"""sqlutil.DriverStatement: a PostgreSQL statement compiled once and sent as asyncpg's SQL answers what the
same statement answers through SQLAlchemy, with the values it binds itself; what it cannot send as compiled
once is refused when it is built, not when a request runs it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import DateTime, Integer, String, bindparam, func, literal, select

from domain.kernel.db import table_of
from domain.kernel.models import SweepRun
from domain.kernel.sqlutil import DriverStatement
from tests.conftest import PG_ADMIN_URL


def test_an_expanding_in_is_refused_when_built():
    statement = select(literal(1)).where(bindparam("x", type_=String).in_(("a", "b")))
    with pytest.raises(ValueError, match="ANY"):
        DriverStatement.of(statement)


@pytest.mark.skipif(not PG_ADMIN_URL, reason="PostgreSQL only: the SQL is asyncpg's")
async def test_it_answers_as_the_statement_does_through_sqlalchemy(runtime: Any):
    now = datetime(2026, 11, 28, 23, 0, tzinfo=UTC)
    statement = select(
        (bindparam("n", type_=Integer) + 1).label("next"),
        literal("fixed").label("word"),  # bound by the statement itself
        bindparam("at", type_=DateTime(timezone=True)).label("at"),
        (bindparam("n", type_=Integer) * 2).label("twice"),  # the same parameter twice: one $n
    )
    driver = DriverStatement.of(statement)
    assert driver.names.count("n") == 1
    params = {"n": 41, "at": now}
    async with runtime.db.transaction() as session:
        through_sqlalchemy = (await session.execute(statement, params)).one()
        sent = await driver.all(session, params)
    assert [tuple(row) for row in sent] == [tuple(through_sqlalchemy)] == [(42, "fixed", now, 82)]
    assert sent[0].word == "fixed"


async def test_it_flushes_the_unit_of_work_first_as_sqlalchemy_does(runtime: Any):
    """What the session holds pending is flushed before the statement runs, as `Session.execute` does before
    any statement, ORM or Core; inside `no_autoflush` it is not. Both databases (on SQLite the statement
    itself runs through the session)."""
    table = table_of(SweepRun)
    counted = DriverStatement.of(
        select(func.count()).select_from(table).where(table.c.holder == bindparam("h"))
    )
    started = datetime(2026, 11, 28, 23, 30, tzinfo=UTC)
    async with runtime.db.transaction() as session:
        with session.no_autoflush:
            session.add(SweepRun(name="probe", holder="driver-test", started_at=started))
            assert (await counted.all(session, {"h": "driver-test"}))[0][0] == 0
        assert (await counted.all(session, {"h": "driver-test"}))[0][0] == 1
        await session.rollback()
