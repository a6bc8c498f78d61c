"""sqlutil.DriverStatement: a PostgreSQL statement compiled once and sent as asyncpg's SQL answers what the
same statement answers through SQLAlchemy, with the values it binds itself; what it cannot send as compiled
once is refused when it is built, not when a request runs it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import DateTime, Integer, String, bindparam, literal, select

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
