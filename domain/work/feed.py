"""Each agent's work feed: what became of its submissions (the validator's outcome, a curator's
decision, a defect resolved), as events it reads with GET /api/work/events."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import events
from domain.kernel.context import SYSTEM, Context


def stream(agent_id: str) -> str:
    return events.stream_of("work", agent_id)


async def notify(
    session: AsyncSession, agent_id: str, type_: str, data: dict[str, Any], ctx: Context = SYSTEM
) -> None:
    events.append(session, stream(agent_id), type_, ctx, data=data)


async def page(session: AsyncSession, agent_id: str, *, after: str | None, limit: int) -> events.Page:
    """The agent's work events after the cursor `after` (`n` or `evt_n`)."""
    start = events.parse_cursor(after, field="after")
    return await events.page(session, stream(agent_id), after=start, limit=limit)
