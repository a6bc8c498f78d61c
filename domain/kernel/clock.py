"""Time and identifiers in one place so that every timestamp is aware UTC."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return str(uuid.uuid4())


def canonical_id(value: str) -> str | None:
    """The id in the form new_id() makes (lower-case UUID), or None when `value` cannot be one.

    Lookups check this first so that a malformed id is a plain 404, never a database error."""
    value = value.strip().lower()
    return value if _UUID.match(value) else None


def iso(dt: datetime | None) -> str | None:
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).isoformat()
