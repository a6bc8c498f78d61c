"""Reference-data seeders run by `concord seed`; each is idempotent and returns rows written."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel.db import Database

SeedFn = Callable[[AsyncSession], Awaitable[int]]


@dataclass(frozen=True)
class Seeder:
    name: str
    fn: SeedFn


async def seed_all(db: Database, seeders: Sequence[Seeder]) -> list[tuple[str, int]]:
    """Each seeder in its own transaction, in order (domain/wiring.py lists them)."""
    results = []
    for seeder in seeders:
        name, fn = seeder.name, seeder.fn
        async with db.transaction() as session:
            results.append((name, await fn(session)))
    return results
