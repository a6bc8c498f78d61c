"""A member's session profile as other parts read it: the principal it acts for (recorded when it joined,
domain/consensus/sessions.py `enrol`; domain/kernel/principals.py)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, literal, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

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


def joins_presence(
    presence: type[SessionPresence], resource_type: str, resource_id: Any, member_id: Any
) -> ColumnElement[bool]:
    """The ON clause joining a member's row (its resource and member id columns) to its session profile."""
    return and_(
        presence.resource_type == literal(resource_type),
        presence.resource_id == resource_id,
        presence.member_id == member_id,
    )
