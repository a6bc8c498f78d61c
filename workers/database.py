"""The workers' own database handle, created on Dramatiq's event-loop thread (engines are loop-bound)."""

from __future__ import annotations

from domain.kernel.db import Database
from domain.kernel.settings import get_settings

_db: Database | None = None


def worker_db() -> Database:
    global _db
    if _db is None:
        _db = Database(get_settings().db_url)
    return _db


def forget_cached() -> None:
    """Drop what the workers' sessions remember across units of work (tests that empty every table)."""
    if _db is not None:
        _db.forget_cached()
