"""A scratch database for a migration test: its own file on SQLite, its own database on PostgreSQL, migrated
step by step to the schema the test starts from, and dropped afterwards."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import migrations
from tests import conftest


@asynccontextmanager
async def scratch_database(suffix: str, revisions: Sequence[str]) -> AsyncIterator[str]:
    """The URL of a fresh database upgraded through `revisions` in order."""
    name = f"{conftest.PG_DB}_{suffix}"
    if conftest.PG_ADMIN_URL:
        await asyncio.to_thread(conftest._admin, f'CREATE DATABASE "{name}"')
        url = conftest._pg_url(conftest.PG_ADMIN_URL, name)
    else:
        url = f"sqlite+aiosqlite:///{conftest.TMP / f'{suffix}-{uuid.uuid4().hex[:8]}.db'}"
    try:
        for revision in revisions:
            await migrations.upgrade_async(url, revision)
        yield url
    finally:
        if conftest.PG_ADMIN_URL:
            await asyncio.to_thread(
                conftest._admin,
                f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}' "
                "AND pid <> pg_backend_pid()",
            )
            await asyncio.to_thread(conftest._admin, f'DROP DATABASE IF EXISTS "{name}"')
