"""Reference-data seeders run by `concord seed`; each is idempotent and returns rows written."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncSession

from domain.db import Database

Seeder = Callable[[AsyncSession], Awaitable[int]]
SEEDERS: list[tuple[str, Seeder]] = []


def seeder(name: str) -> Callable[[Seeder], Seeder]:
    def register(fn: Seeder) -> Seeder:
        SEEDERS.append((name, fn))
        return fn

    return register


async def seed_all(db: Database) -> list[tuple[str, int]]:
    import domain.reference_data  # noqa: F401 - registers the seeders

    results = []
    for name, fn in SEEDERS:
        async with db.transaction() as session:
            results.append((name, await fn(session)))
    return results
