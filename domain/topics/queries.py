"""The topics area's statements where the two dialects differ (the rules are in the area's other modules)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel.sqlutil import on_postgresql

_GRAPH_LOCK = 0x636F6E636F7264  # "concord"


async def lock_dependency_graph(session: AsyncSession) -> None:
    """Serialise changes to the topics' dependency graph for the rest of this transaction: PostgreSQL takes
    a transaction-scoped advisory lock; on SQLite the writer's BEGIN IMMEDIATE already serialises."""
    if on_postgresql(session):
        await session.execute(select(func.pg_advisory_xact_lock(_GRAPH_LOCK)))
