"""The audit trail: one entry per write, readable by the key that made it (GET /api/audit/me)."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.clock import iso, utcnow
from domain.context import Context
from domain.errors import BadRequest
from domain.models import AuditEntry


def _dump(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))


async def record(
    session: AsyncSession,
    ctx: Context,
    op: str,
    entity_type: str,
    entity_id: str,
    *,
    before: Any = None,
    after: Any = None,
    key_hash: str | None = None,
) -> None:
    actor = ctx.actor
    session.add(
        AuditEntry(
            key_hash=key_hash if key_hash is not None else (actor.key_hash or None) if actor else None,
            actor_id=actor.id if actor else None,
            op=op,
            entity_type=entity_type,
            entity_id=entity_id,
            before_json=_dump(before),
            after_json=_dump(after),
            request_id=ctx.request_id,
            ip_country=ctx.country,
            created_at=utcnow(),
        )
    )


def encode_cursor(created_at: datetime, entry_id: int) -> str:
    raw = json.dumps([iso(created_at), entry_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        created, entry_id = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        when = datetime.fromisoformat(created)
        if when.tzinfo is None or not isinstance(entry_id, int) or isinstance(entry_id, bool):
            raise ValueError
        return when, entry_id
    except (ValueError, TypeError, UnicodeError, binascii.Error):
        raise BadRequest("cursor is not a valid audit cursor", code="invalid_cursor") from None


def to_dict(entry: AuditEntry) -> dict[str, Any]:
    return {
        "op": entry.op,
        "entity_type": entry.entity_type,
        "entity_id": entry.entity_id,
        "before_json": entry.before_json,
        "after_json": entry.after_json,
        "request_id": entry.request_id,
        "ip_country": entry.ip_country,
        "created_at": iso(entry.created_at),
    }


async def list_for_key(
    session: AsyncSession, key_hash: str, *, limit: int, cursor: str | None
) -> dict[str, Any]:
    stmt = select(AuditEntry).where(AuditEntry.key_hash == key_hash)
    if cursor:
        when, entry_id = decode_cursor(cursor)
        stmt = stmt.where(
            or_(
                AuditEntry.created_at < when,
                and_(AuditEntry.created_at == when, AuditEntry.id < entry_id),
            )
        )
    stmt = stmt.order_by(AuditEntry.created_at.desc(), AuditEntry.id.desc()).limit(limit + 1)
    rows = list((await session.scalars(stmt)).all())
    has_more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = encode_cursor(rows[-1].created_at, rows[-1].id) if has_more else None
    return {"results": [to_dict(r) for r in rows], "next_cursor": next_cursor, "has_more": has_more}
