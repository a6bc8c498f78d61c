"""MCP sessions of the document API (the streamable HTTP transport's Mcp-Session-Id).

Kept in the database so that every web process, on every machine, knows every session: a client whose next
request lands on another process (several share the port) keeps its session. A session belongs to the service
key that opened it (another key's request sees none), ends on DELETE, and ends after IDLE idle; its last use
is written at most once per TOUCH_EVERY, so that ordinary calls stay reads.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from sqlalchemy import delete, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.documents.models import McpSession
from domain.kernel import keys
from domain.kernel.clock import utcnow
from domain.kernel.sqlutil import execute_counted

IDLE = timedelta(hours=1)
TOUCH_EVERY = timedelta(minutes=1)


def open_session(session: AsyncSession, key_id: str, protocol_version: str) -> str:
    """A new session of `key_id`; answers its id (shown to the client only)."""
    session_id = secrets.token_urlsafe(24)
    now = utcnow()
    session.add(
        McpSession(
            id_hash=keys.hash_key(session_id),
            key_id=key_id,
            protocol_version=protocol_version,
            created_at=now,
            last_seen_at=now,
        )
    )
    return session_id


async def find(session: AsyncSession, session_id: str, key_id: str) -> McpSession | None:
    """The live session `session_id` of `key_id`; None when unknown, another key's, or idle too long."""
    found = await session.get(McpSession, keys.hash_key(session_id))
    if found is None or found.key_id != key_id or utcnow() - found.last_seen_at > IDLE:
        return None
    return found


def needs_touch(found: McpSession, now: datetime | None = None) -> bool:
    return (now or utcnow()) - found.last_seen_at >= TOUCH_EVERY


async def touch(session: AsyncSession, found: McpSession) -> None:
    await session.execute(
        update(McpSession).where(McpSession.id_hash == found.id_hash).values(last_seen_at=utcnow())
    )


async def end(session: AsyncSession, session_id: str, key_id: str) -> bool:
    """End `key_id`'s session `session_id`; False when there was none to end."""
    stmt = delete(McpSession).where(
        McpSession.id_hash == keys.hash_key(session_id), McpSession.key_id == key_id
    )
    return await execute_counted(session, stmt) > 0


async def expire_sessions(session: AsyncSession) -> int:
    """Sweep: forget sessions idle longer than IDLE."""
    return await execute_counted(session, delete(McpSession).where(McpSession.last_seen_at < utcnow() - IDLE))
