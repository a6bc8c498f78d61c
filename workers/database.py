"""The workers' own database handle, created on Dramatiq's event-loop thread (engines are loop-bound)."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel.db import Database
from domain.kernel.settings import get_settings
from infra.metrics import process_metrics

_db: Database | None = None
_hooks: list[Callable[[AsyncSession], None]] = []


def on_commit(callback: Callable[[AsyncSession], None]) -> None:
    """Run `callback` after every commit of the workers' handle too (an in-process worker's jobs count as
    the process's commits: the read caches of the machine see them at once)."""
    _hooks.append(callback)
    if _db is not None:
        _db.on_commit(callback)


def worker_db() -> Database:
    global _db
    if _db is None:
        settings = get_settings()
        _db = Database(
            settings.db_url, pool_size=settings.db_pool_size, max_overflow=settings.db_max_overflow
        )
        for callback in _hooks:
            _db.on_commit(callback)
        process_metrics().track_pool("worker", _db.engine)
    return _db


def forget_cached() -> None:
    """Drop what the workers' sessions remember across units of work (tests that empty every table)."""
    if _db is not None:
        _db.forget_cached()
