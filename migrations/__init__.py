"""Alembic migrations; `concord migrate` applies them (all heads: one branch per area)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.script.revision import ResolutionError

if TYPE_CHECKING:
    from sqlalchemy import Connection

HERE = Path(__file__).resolve().parent


def config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(HERE))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str, revision: str = "heads") -> None:
    """Apply migrations; safe to call from inside a running event loop (runs in a thread)."""
    command.upgrade(config(url), revision)


async def upgrade_async(url: str, revision: str = "heads") -> None:
    await asyncio.to_thread(upgrade, url, revision)


def _missing(conn: Connection, script: ScriptDirectory) -> list[str]:
    current = MigrationContext.configure(conn).get_current_heads()
    try:
        applied = {rev.revision for rev in script.iterate_revisions(current, "base") if rev is not None}
    except ResolutionError:  # a revision this code does not know: a newer Concord migrated it, not behind
        return []
    return sorted(set(script.get_heads()) - applied)


async def missing(url: str) -> list[str]:
    """The heads of this code's migrations that the database at `url` has not reached (all of them for an
    empty database); empty when it is up to date or a newer Concord migrated it further."""
    from domain.kernel.db import make_engine

    chatty = logging.getLogger("alembic")  # its INFO lines describe a migration, and none runs here
    level = chatty.level
    chatty.setLevel(logging.WARNING)
    engine = make_engine(url, null_pool=True)
    try:
        script = ScriptDirectory.from_config(config(url))
        async with engine.connect() as conn:
            return await conn.run_sync(_missing, script)
    finally:
        chatty.setLevel(level)
        await engine.dispose()


def not_migrated(url: str, behind: list[str]) -> str:
    """What an operator reads when the database lacks migrations of this code."""
    where = url.split("@")[-1]
    some = ", ".join(behind[:3]) + (f" and {len(behind) - 3} more" if len(behind) > 3 else "")
    return f"the database {where} lacks migrations of this version of Concord ({some}): run `concord migrate`"
