"""A member's session profile as other parts read it: the principal it acts for (recorded when it joined,
domain/consensus/sessions.py `enrol`; domain/kernel/principals.py)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus.session_models import SessionPresence
from domain.kernel import principals


async def principal_of(session: AsyncSession, resource_type: str, resource_id: str, member_id: str) -> str:
    """The principal the member acts for: its key's attested DID, or the agent itself."""
    recorded = await session.scalar(
        select(SessionPresence.principal_id).where(
            SessionPresence.resource_type == resource_type,
            SessionPresence.resource_id == resource_id,
            SessionPresence.member_id == member_id,
        )
    )
    return principals.of_agent(member_id, recorded)
