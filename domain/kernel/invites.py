"""Invite tokens (PACT §4.1 BYOK join, an Extended feature): one implementation for documents and topics.

A resource's owner issues an invite: a random token shown once (only its SHA-256 is kept), good for
`max_uses` joins until it expires or the owner revokes it. Redeeming one is a single conditional UPDATE
(`uses = uses + 1` where the invite is live and has a use left), so two agents racing for the last use
never both get it; the joiner's transaction then does the rest, and a failure there rolls the use back.

Every way a token can be wrong (unknown, another resource's, expired, revoked, used up) answers the same
403 `invite_token.invalid`, so the answer tells a prober nothing about which tokens or resources exist.
What an owner sees of an invite (`InviteView`) never holds the token."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import keys
from domain.kernel.clock import utcnow
from domain.kernel.errors import Forbidden, NotFound
from domain.kernel.ids import new_id
from domain.kernel.models import Invite

PREFIX = "pact_inv_"
DEFAULT_TTL_SECONDS = 7 * 24 * 3600
MAX_TTL_SECONDS = 90 * 24 * 3600
MAX_USES = 1000
MAX_TOKEN_LENGTH = 200
MAX_LISTED = 500


class ResourceKind(StrEnum):
    """What an invite opens."""

    DOCUMENT = "document"
    TOPIC = "topic"


class InviteStatus(StrEnum):
    """Whether an invite can still be redeemed, and if not, why."""

    ACTIVE = "active"
    EXPIRED = "expired"
    REVOKED = "revoked"
    SPENT = "spent"


@dataclass(frozen=True)
class InviteView:
    """An invite as its owner sees it (never the token)."""

    id: str
    resource_kind: ResourceKind
    resource_id: str
    role: str | None
    label: str | None
    status: InviteStatus
    max_uses: int
    uses: int
    created_at: datetime
    expires_at: datetime
    revoked_at: datetime | None


@dataclass(frozen=True)
class IssuedInvite:
    """A new invite and its token, shown this once."""

    invite: InviteView
    token: str


@dataclass(frozen=True)
class Redeemed:
    """A use taken from a live invite: what the join it admits may be."""

    invite_id: str
    role: str | None


def invalid() -> Forbidden:
    """The one answer for every token that cannot be redeemed here."""
    return Forbidden(
        "the invite token is not valid for this resource (unknown, expired, revoked or used up)",
        code="invite_token.invalid",
    )


def status_of(invite: Invite, now: datetime) -> InviteStatus:
    if invite.revoked_at is not None:
        return InviteStatus.REVOKED
    if invite.uses >= invite.max_uses:
        return InviteStatus.SPENT
    if invite.expires_at <= now:
        return InviteStatus.EXPIRED
    return InviteStatus.ACTIVE


def view(invite: Invite, now: datetime | None = None) -> InviteView:
    return InviteView(
        id=invite.id,
        resource_kind=ResourceKind(invite.resource_kind),
        resource_id=invite.resource_id,
        role=invite.role,
        label=invite.label,
        status=status_of(invite, now or utcnow()),
        max_uses=invite.max_uses,
        uses=invite.uses,
        created_at=invite.created_at,
        expires_at=invite.expires_at,
        revoked_at=invite.revoked_at,
    )


async def issue(
    session: AsyncSession,
    kind: ResourceKind,
    resource_id: str,
    *,
    created_by: str,
    ttl_seconds: int = DEFAULT_TTL_SECONDS,
    max_uses: int = 1,
    role: str | None = None,
    label: str | None = None,
    token: str | None = None,
) -> IssuedInvite:
    """A new invite to a resource the caller has already proven to own. `token` is for fixtures (the
    conformance lab's `invite_xyz`); the API always has one generated."""
    secret = token or keys.generate(PREFIX)
    now = utcnow()
    invite = Invite(
        id=new_id(),
        resource_kind=kind.value,
        resource_id=resource_id,
        token_hash=keys.hash_key(secret),
        role=role,
        label=label,
        created_by=created_by,
        created_at=now,
        expires_at=now + timedelta(seconds=ttl_seconds),
        max_uses=max_uses,
        uses=0,
    )
    session.add(invite)
    await session.flush()
    return IssuedInvite(view(invite, now), secret)


async def listed(session: AsyncSession, kind: ResourceKind, resource_id: str) -> list[InviteView]:
    """A resource's invites, newest first (at most MAX_LISTED)."""
    now = utcnow()
    rows = await session.scalars(
        select(Invite)
        .where(Invite.resource_kind == kind.value, Invite.resource_id == resource_id)
        .order_by(Invite.created_at.desc(), Invite.id.desc())
        .limit(MAX_LISTED)
    )
    return [view(row, now) for row in rows]


@dataclass(frozen=True)
class Revocation:
    invite: InviteView
    changed: bool  # False when it had been revoked already


async def revoke(session: AsyncSession, kind: ResourceKind, resource_id: str, invite_id: str) -> Revocation:
    """Revokes an invite of the resource (idempotent: revoking twice keeps the first time); 404 if the
    resource has no such invite. Joins already made with it stay."""
    invite = None
    if 0 < len(invite_id) <= 36:
        invite = await session.scalar(
            select(Invite)
            .where(
                Invite.id == invite_id, Invite.resource_kind == kind.value, Invite.resource_id == resource_id
            )
            .with_for_update()
        )
    if invite is None:
        raise NotFound(f"invite {invite_id} not found on this resource", code="invite.not_found")
    changed = invite.revoked_at is None
    if changed:
        invite.revoked_at = utcnow()
        await session.flush()
    return Revocation(view(invite), changed)


async def redeem(session: AsyncSession, kind: ResourceKind, resource_id: str, token: str) -> Redeemed:
    """Takes one use of the live invite `token` to this resource, or raises `invalid()`. The caller's
    transaction holds the invite's row until it ends; rolling back gives the use back."""
    if not token or len(token) > MAX_TOKEN_LENGTH or len(resource_id) > 36:
        raise invalid()
    digest = keys.hash_key(token)
    taken = await session.execute(
        update(Invite)
        .where(
            Invite.token_hash == digest,
            Invite.resource_kind == kind.value,
            Invite.resource_id == resource_id,
            Invite.revoked_at.is_(None),
            Invite.expires_at > utcnow(),
            Invite.uses < Invite.max_uses,
        )
        .values(uses=Invite.uses + 1)
        .execution_options(synchronize_session=False)
    )
    if taken.rowcount != 1:  # type: ignore[attr-defined]
        raise invalid()
    row = (await session.execute(select(Invite.id, Invite.role).where(Invite.token_hash == digest))).one()
    return Redeemed(invite_id=row.id, role=row.role)
