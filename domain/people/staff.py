"""Staff keys: operator-issued (`concord keys create-staff`), shown once, stored as SHA-256 only.

Each key carries one or both roles: `curator` (deferred work submissions) and `reviewer` (escalations and
objected proposals). A route declared for a role admits only keys holding it; one declared for any staff
admits every live key."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import audit, keys
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import SYSTEM, Actor, Context
from domain.kernel.errors import BadRequest, NotFound, Unauthorized
from domain.kernel.ids import new_id
from domain.people.models import StaffKey

STAFF_KEY_PREFIX = "staff_sk_"

Role = Literal["curator", "reviewer"]
ROLES: tuple[Role, ...] = ("curator", "reviewer")


@dataclass(frozen=True)
class StaffMember:
    """Who a live staff key belongs to, and what it may do."""

    actor: Actor
    roles: frozenset[Role]


def parse_roles(values: Iterable[str]) -> list[Role]:
    """The roles named by `values` (each one role or a comma-separated list), in the fixed order of ROLES;
    400 naming `role` when none is given or one is unknown."""
    given = {part.strip().lower() for value in values for part in value.split(",")} - {""}
    unknown = sorted(given - set(ROLES))
    if unknown:
        raise BadRequest(
            f"role: unknown role {', '.join(unknown)}; give curator, reviewer or both",
            code="invalid_field",
            field="role",
            unknown=unknown,
        )
    if not given:
        raise BadRequest("role: give at least one of curator, reviewer", code="invalid_field", field="role")
    return [role for role in ROLES if role in given]


def _roles_of(row: StaffKey) -> list[Role]:
    stored = {part.strip() for part in row.roles.split(",")}
    return [role for role in ROLES if role in stored]


def public(row: StaffKey) -> dict[str, Any]:
    """A key as the operator may see it: never its secret nor its hash. A stored format: the audit trail's
    before/after of a key (the CLI prints it as it is); no API answers it."""
    return {
        "id": row.id,
        "name": row.name,
        "roles": _roles_of(row),
        "createdAt": iso(row.created_at),
        "revokedAt": iso(row.revoked_at),
    }


async def create(session: AsyncSession, *, name: str, roles: Iterable[str]) -> dict[str, Any]:
    """A new key; the answer holds the secret (`apiKey`), which is never shown again."""
    name = name.strip()
    if not name or len(name) > 128:
        raise BadRequest("staff name must be 1 to 128 characters", code="invalid_field", field="name")
    chosen = parse_roles(roles)
    secret = keys.generate(STAFF_KEY_PREFIX)
    row = StaffKey(
        id=new_id(), name=name, key_hash=keys.hash_key(secret), roles=",".join(chosen), created_at=utcnow()
    )
    session.add(row)
    await session.flush()
    audit.record(
        session,
        SYSTEM,
        "staff.key.create",
        "staff_key",
        row.id,
        after={"id": row.id, "name": name, "roles": chosen},
    )
    return {**public(row), "apiKey": secret}  # the CLI's: it prints the key once


async def list_keys(session: AsyncSession) -> list[dict[str, Any]]:
    rows = await session.scalars(select(StaffKey).order_by(StaffKey.created_at, StaffKey.id))
    return [public(row) for row in rows]


async def revoke(session: AsyncSession, ctx: Context, key_id: str) -> dict[str, Any]:
    """Revoke a key (idempotent: revoking it again changes nothing); 404 for an unknown id."""
    row = await session.get(StaffKey, key_id.strip())
    if row is None:
        raise NotFound(f"no staff key with id {key_id}", code="key_not_found")
    before = public(row)
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        audit.record(session, ctx, "staff.key.revoke", "staff_key", row.id, before=before)
    return public(row)


async def authenticate(session: AsyncSession, api_key: str | None) -> StaffMember:
    """The staff member and roles of a live staff key, or 401 (agent and commercial keys are refused)."""
    if not api_key:
        raise Unauthorized("missing staff key: send 'Authorization: Bearer staff_sk_…'")
    if not api_key.startswith(STAFF_KEY_PREFIX):
        raise Unauthorized("this endpoint needs a staff key (staff_sk_…)")
    row = await session.scalar(select(StaffKey).where(StaffKey.key_hash == keys.hash_key(api_key)))
    if row is None:
        raise Unauthorized("invalid staff key")
    if row.revoked_at is not None:
        raise Unauthorized("this staff key has been revoked")
    return member_of(row)


def member_of(row: StaffKey) -> StaffMember:
    """The staff member a key row stands for (the caller has checked the key is live)."""
    return StaffMember(Actor(row.id, row.name, row.key_hash, kind="staff"), frozenset(_roles_of(row)))
