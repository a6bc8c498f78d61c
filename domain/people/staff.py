"""Staff keys: operator-issued (`concord keys create-staff`), shown once, stored as SHA-256 only."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import audit, keys
from domain.kernel.clock import iso, new_id, utcnow
from domain.kernel.context import SYSTEM, Actor
from domain.kernel.errors import BadRequest, Unauthorized
from domain.people.models import StaffKey

STAFF_KEY_PREFIX = "staff_sk_"


async def create(session: AsyncSession, *, name: str) -> dict[str, Any]:
    name = name.strip()
    if not name or len(name) > 128:
        raise BadRequest("staff name must be 1 to 128 characters", code="invalid_field", field="name")
    secret = keys.generate(STAFF_KEY_PREFIX)
    row = StaffKey(id=new_id(), name=name, key_hash=keys.hash_key(secret), created_at=utcnow())
    session.add(row)
    await session.flush()
    await audit.record(
        session, SYSTEM, "staff.key.create", "staff_key", row.id, after={"id": row.id, "name": name}
    )
    return {"id": row.id, "name": name, "apiKey": secret, "createdAt": iso(row.created_at)}


async def authenticate(session: AsyncSession, api_key: str | None) -> Actor:
    """The staff Actor for a staff key, or 401 (agent and commercial keys are refused)."""
    if not api_key:
        raise Unauthorized("missing staff key: send 'Authorization: Bearer staff_sk_…'")
    if not api_key.startswith(STAFF_KEY_PREFIX):
        raise Unauthorized("this endpoint needs a staff key (staff_sk_…)")
    row = await session.scalar(select(StaffKey).where(StaffKey.key_hash == keys.hash_key(api_key)))
    if row is None or row.revoked_at is not None:
        raise Unauthorized("invalid staff key")
    return Actor(row.id, row.name, row.key_hash, kind="staff")
