"""Alembic environment: async engines, batch mode for SQLite, the models' metadata."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

import domain.tables  # noqa: F401 - registers every table
from domain.kernel.db import Base, make_engine

target_metadata = Base.metadata


def _url() -> str:
    url = context.config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no sqlalchemy.url: run migrations through `concord migrate` (migrations.upgrade)")
    return url


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _online() -> None:
    engine = make_engine(_url(), null_pool=True)
    async with engine.connect() as connection:
        await connection.run_sync(_run)
        await connection.commit()
    await engine.dispose()


if context.is_offline_mode():
    context.configure(
        url=_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(_online())
