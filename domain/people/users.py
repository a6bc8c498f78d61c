"""The people of an organisation who sign in to the document API (`concord users ...`).

A person has an email address (kept lower-case, unique within the organisation), a password kept only as
an Argon2id hash (memory-hard and salted; its cost is the operator's, CONCORD_PASSWORD_HASH_*, argon2-cffi's
defaults unless set; the parameters are in the hash, so a change reaches each person at the next sign-in),
and the document API scopes the person acts with (the service keys' scopes and parser).
Hashing and checking run in a thread: they take tens of milliseconds on purpose."""

from __future__ import annotations

import asyncio
import re
from functools import lru_cache
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.documents import servicekeys
from domain.documents.models import Organisation
from domain.kernel import audit
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest, Conflict, NotFound
from domain.kernel.ids import new_id
from domain.kernel.settings import get_settings
from domain.people.models import User, UserSession

MIN_PASSWORD = 12
MAX_PASSWORD = 1024  # hashing cost grows with the input: a bound keeps a sign-in cheap to refuse
MAX_EMAIL = 320
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


@lru_cache(maxsize=4)
def _hasher_with(memory_kib: int, time_cost: int, parallelism: int) -> PasswordHasher:
    return PasswordHasher(memory_cost=memory_kib, time_cost=time_cost, parallelism=parallelism)


def _hasher() -> PasswordHasher:
    """The hasher of the settings' Argon2id cost."""
    s = get_settings()
    return _hasher_with(s.password_hash_memory_kib, s.password_hash_time_cost, s.password_hash_parallelism)


def normalise_email(raw: str) -> str:
    """The stored form of an address: trimmed and lower-case; 400 naming `email` when it is not one."""
    email = raw.strip().lower()
    if not email or len(email) > MAX_EMAIL or not _EMAIL.match(email):
        raise BadRequest("email: give an email address such as ada@example.org", field="email")
    return email


def check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise BadRequest(f"password: at least {MIN_PASSWORD} characters", field="password")
    if len(password) > MAX_PASSWORD:
        raise BadRequest(f"password: at most {MAX_PASSWORD} characters", field="password")
    if "\x00" in password:
        raise BadRequest("password: NUL characters are not allowed", field="password")


async def hash_password(password: str) -> str:
    return await asyncio.to_thread(_hasher().hash, password)


@lru_cache(maxsize=4)
def _decoy_hash(hasher: PasswordHasher) -> str:
    return hasher.hash("not anyone's password, checked so that unknown addresses take as long")


async def password_matches(stored: str | None, password: str) -> bool:
    """Whether `password` is the one `stored` was made from. With no stored hash (an unknown address) a
    decoy is checked instead, so that the answer takes as long and says nothing about the address."""

    hasher = _hasher()

    def verify() -> bool:
        try:
            return hasher.verify(stored or _decoy_hash(hasher), password) and stored is not None
        except (VerificationError, InvalidHashError):
            return False

    if len(password) > MAX_PASSWORD:
        return False
    return await asyncio.to_thread(verify)


def needs_rehash(stored: str) -> bool:
    return _hasher().check_needs_rehash(stored)


def public(user: User, org: Organisation) -> dict[str, Any]:
    """A person as the operator may see them: never the password hash. A stored format: the audit trail's
    before/after of a person (the CLI prints it as it is); no API answers it."""
    return {
        "id": user.id,
        "email": user.email,
        "organisation": org.name,
        "organisationId": org.id,
        "scopes": list(user.scopes),
        "createdAt": iso(user.created_at),
        "lastLoginAt": iso(user.last_login_at),
        "disabledAt": iso(user.disabled_at),
    }


async def create(
    session: AsyncSession, ctx: Context, *, org_name: str, email: str, password: str, scopes: str | list[str]
) -> dict[str, Any]:
    """A new person of `org_name` (the organisation is created when new, as for service keys); 409 when
    the organisation already has someone with that address."""
    address = normalise_email(email)
    check_password(password)
    chosen = servicekeys.parse_scopes(scopes)
    org = await servicekeys.organisation(session, org_name, create=True)
    taken = await session.scalar(select(User.id).where(User.org_id == org.id, User.email == address))
    if taken is not None:
        raise Conflict(
            f"email: {address} is already a person of {org.name}", code="user_exists", field="email"
        )
    user = User(
        id=new_id(),
        org_id=org.id,
        email=address,
        password_hash=await hash_password(password),
        scopes=chosen,
        created_at=utcnow(),
    )
    session.add(user)
    await session.flush()
    audit.record(session, ctx, "people.user.create", "user", user.id, after=public(user, org))
    return public(user, org)


async def list_users(session: AsyncSession, org_name: str) -> list[dict[str, Any]]:
    org = await servicekeys.organisation(session, org_name, create=False)
    rows = await session.scalars(select(User).where(User.org_id == org.id).order_by(User.email))
    return [public(user, org) for user in rows]


async def _person(session: AsyncSession, org_name: str, email: str) -> tuple[User, Organisation]:
    org = await servicekeys.organisation(session, org_name, create=False)
    address = normalise_email(email)
    user = await session.scalar(select(User).where(User.org_id == org.id, User.email == address))
    if user is None:
        raise NotFound(f"no person {address} in {org.name}", code="user_not_found", field="email")
    return user, org


async def disable(session: AsyncSession, ctx: Context, *, org_name: str, email: str) -> dict[str, Any]:
    """Disable a person (idempotent): sign-ins are refused and every session of theirs ends at once."""
    user, org = await _person(session, org_name, email)
    if user.disabled_at is None:
        before = public(user, org)
        now = utcnow()
        user.disabled_at = now
        await session.execute(
            update(UserSession)
            .where(UserSession.user_id == user.id, UserSession.ended_at.is_(None))
            .values(ended_at=now, end_reason="user_disabled")
        )
        audit.record(
            session, ctx, "people.user.disable", "user", user.id, before=before, after=public(user, org)
        )
    return public(user, org)


async def enable(session: AsyncSession, ctx: Context, *, org_name: str, email: str) -> dict[str, Any]:
    """Let a disabled person sign in again (idempotent). Sessions ended by the disable stay ended: the
    person signs in afresh, so a token issued before the disable never comes back to life."""
    user, org = await _person(session, org_name, email)
    if user.disabled_at is not None:
        before = public(user, org)
        user.disabled_at = None
        audit.record(
            session, ctx, "people.user.enable", "user", user.id, before=before, after=public(user, org)
        )
    return public(user, org)
