"""Alembic migrations; `concord migrate` applies them (all heads: one branch per area)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic import command
from alembic.config import Config

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
