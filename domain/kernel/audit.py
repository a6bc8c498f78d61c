"""The audit trail: one entry per write, readable by the key that made it (GET /api/audit/me)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import journal
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest
from domain.kernel.models import AuditEntry

_OP = re.compile(r"^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$")


def _dump(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))


def record(
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
    """Add one entry to the caller's transaction: it commits (or rolls back) with the write it describes,
    written with the unit of work's journal just before the commit (domain/kernel/journal.py).

    The entry belongs to `key_hash` (default: the acting key's) and keeps the request id and the coarse
    country from the Context; the client address is never stored."""
    if not _OP.match(op):
        raise ValueError(f"audit op {op!r} is not in dot notation (area.action)")
    actor = ctx.actor
    if key_hash is None and actor is not None:
        key_hash = actor.key_hash or None  # the system actor has no key
    journal.of(session).audit.append(
        {
            "key_hash": key_hash,
            "actor_id": actor.id if actor else None,
            "op": op,
            "entity_type": entity_type,
            "entity_id": entity_id,
            "before_json": _dump(before),
            "after_json": _dump(after),
            "request_id": ctx.request_id,
            "ip_country": ctx.country,
            "created_at": utcnow(),
        }
    )


# A cursor is base64url(JSON [created_at, id, check]); `check` binds the position to the caller's key
# hash, so an edited, truncated or another agent's cursor is refused (400) instead of silently seeking.
_MAX_ID = 2**63 - 1


def _check(key_hash: str, created: str, entry_id: int) -> str:
    return hmac.new(key_hash.encode(), f"{created}|{entry_id}".encode(), hashlib.sha256).hexdigest()[:16]


def encode_cursor(key_hash: str, created_at: datetime, entry_id: int) -> str:
    created = iso(created_at)
    raw = json.dumps([created, entry_id, _check(key_hash, created, entry_id)], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(key_hash: str, cursor: str) -> tuple[datetime, int]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        created, entry_id, check = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        if not isinstance(created, str) or not isinstance(check, str):
            raise ValueError
        if not isinstance(entry_id, int) or isinstance(entry_id, bool) or not 0 < entry_id <= _MAX_ID:
            raise ValueError
        if not hmac.compare_digest(check, _check(key_hash, created, entry_id)):
            raise ValueError
        when = datetime.fromisoformat(created)
        if when.tzinfo is None:
            raise ValueError
        return when.astimezone(UTC), entry_id
    except (ValueError, TypeError, OverflowError, UnicodeError, binascii.Error, RecursionError):
        raise BadRequest(
            "cursor is not a next_cursor this endpoint gave you", code="invalid_cursor", field="cursor"
        ) from None


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
    """The key's entries, newest first, a page at a time.

    Keyset paging on the index (key_hash, created_at, id): the cursor's `created_at <= when` is the index
    range (both databases seek to it), and the tie-break on id only filters rows of that very instant, so
    a page 10,000 deep reads as many index entries as the first page."""
    stmt = select(AuditEntry).where(AuditEntry.key_hash == key_hash)
    if cursor:
        when, entry_id = decode_cursor(key_hash, cursor)
        stmt = stmt.where(
            AuditEntry.created_at <= when,
            or_(AuditEntry.created_at < when, AuditEntry.id < entry_id),
        )
    stmt = stmt.order_by(AuditEntry.created_at.desc(), AuditEntry.id.desc()).limit(limit + 1)
    rows = list((await session.scalars(stmt)).all())
    has_more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = encode_cursor(key_hash, rows[-1].created_at, rows[-1].id) if has_more else None
    return {"results": [to_dict(r) for r in rows], "next_cursor": next_cursor, "has_more": has_more}
