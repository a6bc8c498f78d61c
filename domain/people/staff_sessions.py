"""Sign-in sessions of the review pages: a staff member presents a staff key once and gets a session token
(the browser keeps it in a cookie). Only the token's SHA-256 is stored, beside the session's form token
(CSRF) and its expiry; signing out ends the session for good, and a revoked key ends its sessions."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import audit, keys
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import Context
from domain.kernel.errors import Unauthorized
from domain.kernel.ids import new_id
from domain.kernel.sqlutil import execute_counted
from domain.kernel.sweeps import retention_cutoff
from domain.people import staff
from domain.people.models import StaffKey, StaffSession

SESSION_TOKEN_PREFIX = "staff_ss_"


@dataclass(frozen=True)
class SignedIn:
    """A live session: who holds it, their roles, the session's form token and its id."""

    session_id: str
    member: staff.StaffMember
    csrf_token: str


async def start(
    session: AsyncSession, ctx: Context, api_key: str | None, *, ttl: timedelta
) -> tuple[str, SignedIn]:
    """Sign a staff member in with their key (401 as `staff.authenticate` for a bad one): the new session's
    token, to be given to the browser once, and the session."""
    member = await staff.authenticate(session, (api_key or "").strip())
    token = keys.generate(SESSION_TOKEN_PREFIX)
    now = utcnow()
    row = StaffSession(
        id=new_id(),
        token_hash=keys.hash_key(token),
        staff_key_id=member.actor.id,
        csrf_token=secrets.token_urlsafe(32),
        created_at=now,
        expires_at=now + ttl,
    )
    session.add(row)
    await session.flush()
    audit.record(
        session,
        Context(actor=member.actor, request_id=ctx.request_id, country=ctx.country),
        "staff.session.start",
        "staff_session",
        row.id,
        after={"staffKeyId": member.actor.id, "expiresAt": iso(row.expires_at)},  # stored format (audit)
    )
    return token, SignedIn(row.id, member, row.csrf_token)


async def resume(session: AsyncSession, token: str | None) -> SignedIn:
    """The live session of a token; 401 when there is none, it expired, ended or its key was revoked."""
    if not token or not token.startswith(SESSION_TOKEN_PREFIX):
        raise Unauthorized("not signed in", code="not_signed_in")
    found = (
        await session.execute(
            select(StaffSession, StaffKey)
            .join(StaffKey, StaffKey.id == StaffSession.staff_key_id)
            .where(StaffSession.token_hash == keys.hash_key(token))
        )
    ).first()
    if found is None:
        raise Unauthorized("not signed in", code="not_signed_in")
    row, key = found
    if row.ended_at is not None:
        raise Unauthorized("this session was signed out", code="session_ended")
    if row.expires_at <= utcnow():
        raise Unauthorized("this session has expired: sign in again", code="session_expired")
    if key.revoked_at is not None:
        raise Unauthorized("this staff key has been revoked", code="session_ended")
    return SignedIn(row.id, staff.member_of(key), row.csrf_token)


async def end(session: AsyncSession, ctx: Context, session_id: str) -> None:
    """Sign out: the session ends now (idempotent)."""
    row = await session.get(StaffSession, session_id)
    if row is None or row.ended_at is not None:
        return
    row.ended_at = utcnow()
    audit.record(session, ctx, "staff.session.end", "staff_session", session_id)


async def purge(session: AsyncSession) -> int:
    """Delete sessions that ended or expired more than the retention period ago (sign-ins and sign-outs
    stay in the audit trail)."""
    cutoff = retention_cutoff()
    return await execute_counted(
        session,
        delete(StaffSession).where(or_(StaffSession.ended_at < cutoff, StaffSession.expires_at < cutoff)),
    )
