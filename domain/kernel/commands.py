"""What every operator command shares: a database for the command's length, and a domain refusal printed
as one line on standard error with exit status 2 (what `concord` promises for bad input)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable

from domain.kernel.db import Database
from domain.kernel.errors import DomainError
from domain.kernel.settings import Settings


async def with_database(settings: Settings, work: Callable[[Database], Awaitable[None]]) -> int:
    """Run `work` against the configured database; 0, or 2 after printing a refusal's reason."""
    db = Database(settings.db_url)
    try:
        await work(db)
        return 0
    except DomainError as exc:
        print(f"error: {exc.detail}", file=sys.stderr)
        return 2
    finally:
        await db.dispose()
