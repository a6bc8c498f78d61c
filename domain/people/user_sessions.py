"""Browser sessions on the document API (spec/document-api.md §5.2): a person signs in with email and
password and gets a short-lived access token (a JWT the document API accepts as `Authorization: Bearer`
with the person's scopes) and an opaque refresh token (kept as SHA-256 only) that buys the next pair once.

A sign-in opens a session; its access tokens name it (`sid`) and its refresh tokens belong to it. The
session ends on logout, when a refresh token is presented a second time (someone else may hold a copy:
every token of the session stops working) and when the person is disabled. Access tokens are checked
against the person and the session on every request, so an ended session's tokens stop at once.

Times come from the kernel's clock (`iat`/`exp` included), so expiry is checked here rather than by PyJWT,
which would read the machine's clock."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

import jwt
from sqlalchemy import delete, exists, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.documents.models import Organisation
from domain.kernel import audit, keys
from domain.kernel.clock import utcnow
from domain.kernel.context import Actor, Context
from domain.kernel.errors import BadRequest, DomainError, Unauthorized
from domain.kernel.ids import new_id
from domain.kernel.settings import Settings
from domain.kernel.sqlutil import execute_counted
from domain.kernel.sweeps import retention_cutoff
from domain.people import users
from domain.people.models import OAuthCode, RefreshToken, User, UserSession

ISSUER = "concord"
AUDIENCE = "concord-documents"
ALGORITHM = "HS256"
TOKEN_TYPE = "Bearer"
REFRESH_PREFIX = "crt_"
SECRET_FILE = "jwt-secret"
# The same answer for an unknown address, a wrong password and a disabled person: it says nothing more.
BAD_CREDENTIALS = "wrong email or password"
TOO_MANY_MATCHES = 20  # an address in more organisations than this must name its organisation


@dataclass(frozen=True)
class Person:
    """Who a live access token belongs to, and what it may do now."""

    user: User
    session_id: str
    scopes: frozenset[str]
    actor: Actor


@dataclass(frozen=True)
class Refusal:
    """A refused refresh whose side effect (the session ended) must commit before the error answers."""

    error: DomainError


@dataclass(frozen=True)
class TokenPair:
    """A session's new pair of tokens (the access token's lifetime and the refresh token's, in seconds), the
    scopes the access token holds, and the person they are for."""

    access_token: str
    token_type: str
    expires_in: int
    refresh_token: str
    refresh_expires_in: int
    scopes: list[str]
    user: User
    organisation: Organisation


class NotGranted(Exception):
    """A refresh asked to narrow its access token to a scope its grant does not hold."""


def looks_like_jwt(token: str) -> bool:
    """Whether a presented credential is a JWT (three base64url parts) rather than an API key."""
    return token.startswith("eyJ") and token.count(".") == 2


@lru_cache(maxsize=8)
def _secret_in(data_dir: Path) -> str:
    path = data_dir / SECRET_FILE
    try:
        return path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        pass
    data_dir.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(48)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process of this data directory wrote it first: use theirs
        return path.read_text(encoding="ascii").strip()
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(secret + "\n")
    return secret


def signing_secret(settings: Settings) -> str:
    """CONCORD_JWT_SECRET, or the one generated once under the data directory (so that tokens survive a
    restart of the embedded mode)."""
    return settings.jwt_secret or _secret_in(settings.data_dir.resolve())


def actor_of(user: User) -> Actor:
    """A person as the actor of audit entries and events (shown as an Individual)."""
    return Actor(id=user.id, name=user.email, key_hash=keys.hash_key(f"user:{user.id}"), kind="person")


def _access_token(
    settings: Settings,
    user: User,
    session_id: str,
    scopes: list[str],
    now: datetime,
    audience: str,
    jti: str | None = None,
) -> str:
    issued = int(now.timestamp())
    claims = {
        "iss": ISSUER,
        "aud": audience,
        "sub": user.id,
        "org": user.org_id,
        "scopes": scopes,
        "sid": session_id,
        "iat": issued,
        "exp": issued + settings.access_token_minutes * 60,
        "jti": jti or new_id(),
    }
    return jwt.encode(claims, signing_secret(settings), algorithm=ALGORITHM)


def _derived(settings: Settings, purpose: str, token: str) -> bytes:
    """An HMAC of a refresh token under the signing secret, for one purpose."""
    key = signing_secret(settings).encode()
    return hmac.new(key, f"concord-refresh-{purpose}:{token}".encode(), hashlib.sha256).digest()


def successor_of(settings: Settings, token: str) -> str:
    """The refresh token a refresh with `token` issues: derived from it, so that a retry of that refresh
    can be answered with the same one although only hashes are kept. Without the signing secret it is as
    unpredictable as a random one, and it is only ever answered to a holder of `token` within the grace."""
    return (
        REFRESH_PREFIX
        + base64.urlsafe_b64encode(_derived(settings, "successor", token)).rstrip(b"=").decode()
    )


def _successor_jti(settings: Settings, token: str) -> str:
    return str(uuid.UUID(bytes=_derived(settings, "jti", token)[:16], version=4))


def _new_refresh_token(
    session: AsyncSession,
    settings: Settings,
    session_id: str,
    now: datetime,
    *,
    secret: str | None = None,
    access_scopes: list[str] | None = None,
) -> str:
    secret = secret or REFRESH_PREFIX + secrets.token_urlsafe(32)
    session.add(
        RefreshToken(
            id=new_id(),
            session_id=session_id,
            token_hash=keys.hash_key(secret),
            created_at=now,
            expires_at=now + timedelta(days=settings.refresh_token_days),
            access_scopes=access_scopes,
        )
    )
    return secret


def session_scopes(user: User, opened: UserSession) -> list[str]:
    """What the session's tokens may do: the person's scopes, narrowed to those granted to the OAuth client
    that opened it (the person's current scopes win: one taken away is gone from the next token)."""
    if opened.scopes is None:
        return list(user.scopes)
    return [s for s in user.scopes if s in opened.scopes]


def _pair(
    session: AsyncSession,
    settings: Settings,
    user: User,
    org: Organisation,
    opened: UserSession,
    narrow: list[str] | None = None,
    *,
    replaces: str | None = None,
    now: datetime | None = None,
) -> TokenPair:
    """A new pair of the session: a sign-in's (random), or, replacing the refresh token `replaces`, one
    derived from it (its row keeps the access token's scopes, for a retry: `_replayed`)."""
    now = now or utcnow()
    scopes = session_scopes(user, opened)
    if narrow is not None:
        scopes = [s for s in scopes if s in narrow]
    if replaces is None:
        refresh_token = _new_refresh_token(session, settings, opened.id, now)
        jti = None
    else:
        secret = successor_of(settings, replaces)
        refresh_token = _new_refresh_token(
            session, settings, opened.id, now, secret=secret, access_scopes=scopes
        )
        jti = _successor_jti(settings, replaces)
    access = _access_token(settings, user, opened.id, scopes, now, opened.audience or AUDIENCE, jti)
    return _pair_body(settings, user, org, access, refresh_token, scopes)


def _replayed(
    settings: Settings,
    user: User,
    org: Organisation,
    opened: UserSession,
    successor: RefreshToken,
    token: str,
) -> TokenPair:
    """The pair a refresh with `token` issued, made again from the new refresh token's row: the access
    token has the same claims (issued at the row's creation, its scopes, the derived jti), so the same
    signature, and the refresh token is derived again."""
    scopes = list(successor.access_scopes or [])
    access = _access_token(
        settings,
        user,
        opened.id,
        scopes,
        successor.created_at,
        opened.audience or AUDIENCE,
        _successor_jti(settings, token),
    )
    return _pair_body(settings, user, org, access, successor_of(settings, token), scopes)


def _pair_body(
    settings: Settings, user: User, org: Organisation, access: str, refresh_token: str, scopes: list[str]
) -> TokenPair:
    return TokenPair(
        access_token=access,
        token_type=TOKEN_TYPE,
        expires_in=settings.access_token_minutes * 60,
        refresh_token=refresh_token,
        refresh_expires_in=settings.refresh_token_days * 86400,
        scopes=scopes,
        user=user,
        organisation=org,
    )


async def login(
    session: AsyncSession,
    ctx: Context,
    settings: Settings,
    *,
    email: str,
    password: str,
    organisation: str | None = None,
) -> TokenPair:
    """A new session and its first token pair; 401 with the same words whatever was wrong."""
    user, org = await verify_credentials(session, email=email, password=password, organisation=organisation)
    return await open_session(session, ctx, settings, user, org)


async def verify_credentials(
    session: AsyncSession, *, email: str, password: str, organisation: str | None = None
) -> tuple[User, Organisation]:
    """The live person these credentials name, or 401 with the same words whatever was wrong (400 when
    the address signs in to several organisations and none is named)."""
    address = email.strip().lower()
    query = (
        select(User, Organisation)
        .join(Organisation, Organisation.id == User.org_id)
        .where(User.email == address, User.disabled_at.is_(None))
        .order_by(User.created_at, User.id)
        .limit(TOO_MANY_MATCHES + 1)
    )
    if organisation is not None and organisation.strip():
        query = query.where(Organisation.name_key == " ".join(organisation.split()).casefold())
    candidates = list((await session.execute(query)).tuples())
    if len(candidates) > TOO_MANY_MATCHES:
        raise BadRequest("organisation: name the organisation to sign in to", field="organisation")
    matches = [
        (user, org) for user, org in candidates if await users.password_matches(user.password_hash, password)
    ]
    if not candidates:
        await users.password_matches(None, password)  # as long as a wrong password takes
    if not matches:
        raise Unauthorized(BAD_CREDENTIALS, code="invalid_credentials")
    if len(matches) > 1:
        raise BadRequest(
            "organisation: this address signs in to several organisations; name one",
            field="organisation",
            organisations=sorted(org.name for _, org in matches),
        )
    user, org = matches[0]
    user.last_login_at = utcnow()
    if users.needs_rehash(user.password_hash):
        user.password_hash = await users.hash_password(password)
    return user, org


async def open_session(
    session: AsyncSession,
    ctx: Context,
    settings: Settings,
    user: User,
    org: Organisation,
    *,
    client_id: str | None = None,
    scopes: list[str] | None = None,
    audience: str | None = None,
    session_id: str | None = None,
) -> TokenPair:
    """A new session of a person and its first token pair: the person's own sign-in, or (with `client_id`,
    `scopes` and `audience`) the one an OAuth client opens with an authorization code."""
    opened = UserSession(
        id=session_id or new_id(),
        user_id=user.id,
        created_at=utcnow(),
        client_id=client_id,
        scopes=scopes,
        audience=audience,
    )
    session.add(opened)
    await session.flush()
    pair = _pair(session, settings, user, org, opened)
    person_ctx = Context(actor=actor_of(user), request_id=ctx.request_id, country=ctx.country)
    # The audit entries' data (a session opened, a refresh token reused) is a stored format.
    after = {"userId": user.id} if client_id is None else {"userId": user.id, "clientId": client_id}
    op = "people.session.login" if client_id is None else "people.session.oauth"
    audit.record(session, person_ctx, op, "user_session", opened.id, after=after)
    return pair


async def _end(session: AsyncSession, session_id: str, reason: str) -> bool:
    """End a session (idempotent); whether this call ended it."""
    result = await session.execute(
        update(UserSession)
        .where(UserSession.id == session_id, UserSession.ended_at.is_(None))
        .values(ended_at=utcnow(), end_reason=reason)
    )
    return bool(getattr(result, "rowcount", 0))


async def refresh(
    session: AsyncSession,
    settings: Settings,
    token: str,
    *,
    client_id: str | None = None,
    narrow: list[str] | None = None,
) -> TokenPair | Refusal:
    """The next token pair for a refresh token, which is used up. A token presented again within
    `refresh_reuse_grace_seconds` of its use, while the new refresh token is unused, gets the very pair
    its use got (a client's retry, or two requests at once); otherwise it ends its session (the refusal
    is returned, to be raised once the end is committed). A session an OAuth client opened is refreshed
    by that client only (`client_id`), a person's own sign-in without one. `narrow` limits the new access
    token to some of the session's scopes (RFC 6749 §6); one outside the grant raises NotGranted before
    the token is used (a retry gets the first pair, whatever it asks)."""
    token = token.strip()
    found = (
        await session.execute(
            select(RefreshToken, UserSession, User, Organisation)
            .join(UserSession, UserSession.id == RefreshToken.session_id)
            .join(User, User.id == UserSession.user_id)
            .join(Organisation, Organisation.id == User.org_id)
            .where(RefreshToken.token_hash == keys.hash_key(token))
        )
    ).first()
    if found is None:
        raise Unauthorized("invalid refresh token", code="invalid_refresh_token")
    row, opened, user, org = found
    if opened.client_id != client_id:
        raise Unauthorized("invalid refresh token", code="invalid_refresh_token")
    if opened.ended_at is not None or user.disabled_at is not None:
        raise Unauthorized("this session has ended: sign in again", code="invalid_refresh_token")
    now = utcnow()
    if row.expires_at <= now:
        raise Unauthorized("this refresh token has expired: sign in again", code="refresh_token_expired")
    if narrow is not None:
        granted = opened.scopes if opened.scopes is not None else user.scopes
        outside = [s for s in narrow if s not in granted]
        if outside:
            raise NotGranted(f"scope: not granted to this client: {', '.join(outside)}")
        if not [s for s in session_scopes(user, opened) if s in narrow]:
            raise NotGranted("scope: the person no longer holds any of the scopes asked")
    # Used once, atomically: of two requests presenting the same token, one makes the pair (the other
    # waits for its commit on PostgreSQL's row lock, or behind its write on SQLite, then finds it used).
    used = await session.execute(
        update(RefreshToken)
        .where(RefreshToken.id == row.id, RefreshToken.used_at.is_(None))
        .values(used_at=now)
    )
    if not getattr(used, "rowcount", 0):
        successor = await _retried(session, settings, row, token, now)
        if successor is not None:
            return _replayed(settings, user, org, opened, successor, token)
        await _end(session, opened.id, "refresh_reused")
        audit.record(
            session,
            Context(actor=actor_of(user)),
            "people.session.reuse",
            "user_session",
            opened.id,
            after={"userId": user.id},
        )
        return Refusal(
            Unauthorized(
                "this refresh token was already used, so its session has ended: sign in again",
                code="refresh_token_reused",
            )
        )
    opened.refreshed_at = now
    return _pair(session, settings, user, org, opened, narrow, replaces=token, now=now)


async def _retried(
    session: AsyncSession, settings: Settings, row: RefreshToken, token: str, now: datetime
) -> RefreshToken | None:
    """The new refresh token's row when presenting a used `token` is a retry of its refresh: within the
    grace of its use, the session alive, the new token (derived from it) not used yet. Read afresh: the
    use may have been committed by another request since this one first read the row."""
    grace = settings.refresh_reuse_grace_seconds
    if grace <= 0:
        return None
    state = (
        await session.execute(
            select(RefreshToken.used_at, UserSession.ended_at)
            .join(UserSession, UserSession.id == RefreshToken.session_id)
            .where(RefreshToken.id == row.id)
        )
    ).first()
    if state is None or state.used_at is None or state.ended_at is not None:
        return None
    if (now - state.used_at).total_seconds() > grace:
        return None
    successor = await session.scalar(
        select(RefreshToken)
        .where(RefreshToken.token_hash == keys.hash_key(successor_of(settings, token)))
        .execution_options(populate_existing=True)
    )
    if successor is None or successor.session_id != row.session_id or successor.access_scopes is None:
        return None
    return successor if successor.used_at is None else None


async def logout(session: AsyncSession, *, refresh_token: str | None, person: Person | None) -> str:
    """End the session of a refresh token or of the access token's person (idempotent); its id."""
    if refresh_token:
        session_id = await session.scalar(
            select(RefreshToken.session_id).where(
                RefreshToken.token_hash == keys.hash_key(refresh_token.strip())
            )
        )
        if session_id is None:
            raise Unauthorized("invalid refresh token", code="invalid_refresh_token")
        user_id = await session.scalar(select(UserSession.user_id).where(UserSession.id == session_id))
    elif person is not None:
        session_id, user_id = person.session_id, person.user.id
    else:
        # No credential at all: as any other operation asked without one, 401 (the body is well formed).
        raise Unauthorized(
            "refreshToken: give the refresh token, or send the access token as 'Authorization: Bearer …'",
            code="missing_credentials",
            field="refreshToken",
        )
    ended_now = await _end(session, session_id, "logout")
    user = await session.get(User, user_id) if user_id else None
    if ended_now and user is not None:
        audit.record(
            session, Context(actor=actor_of(user)), "people.session.logout", "user_session", session_id
        )
    return session_id


def _claims(settings: Settings, token: str, audiences: list[str]) -> dict[str, Any]:
    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            signing_secret(settings),
            algorithms=[ALGORITHM],
            audience=audiences,
            issuer=ISSUER,
            options={
                "verify_exp": False,  # checked below against the kernel's clock
                "verify_iat": False,
                "verify_nbf": False,
                "require": ["sub", "sid", "scopes", "exp", "iat", "iss", "aud", "jti"],
            },
        )
    except jwt.InvalidAudienceError:
        raise Unauthorized("this token is not for the document API", code="invalid_token") from None
    except jwt.InvalidIssuerError:
        raise Unauthorized("this token was not issued by Concord", code="invalid_token") from None
    except jwt.MissingRequiredClaimError as exc:
        raise Unauthorized(f"invalid access token: {exc}", code="invalid_token") from None
    except jwt.InvalidTokenError:
        raise Unauthorized("invalid access token", code="invalid_token") from None
    exp = claims["exp"]
    if not isinstance(exp, int | float) or not isinstance(claims["scopes"], list):
        raise Unauthorized("invalid access token", code="invalid_token")
    if exp <= utcnow().timestamp():
        raise Unauthorized(
            "the access token has expired: refresh it (POST /api/auth/refresh) or sign in again",
            code="token_expired",
        )
    return claims


async def session_of(
    session: AsyncSession, settings: Settings, token: str, *, resource: str | None = None
) -> UserSession | None:
    """The session a live access token or a refresh token belongs to, or None (for revocation)."""
    if token.startswith(REFRESH_PREFIX):
        session_id = await session.scalar(
            select(RefreshToken.session_id).where(RefreshToken.token_hash == keys.hash_key(token))
        )
    elif looks_like_jwt(token):
        try:
            claims = _claims(settings, token, [AUDIENCE, resource] if resource else [AUDIENCE])
        except Unauthorized:
            return None
        session_id = str(claims["sid"])
    else:
        return None
    return await session.get(UserSession, session_id) if session_id else None


async def end_session(session: AsyncSession, session_id: str, reason: str) -> bool:
    """End a session (idempotent): its access and refresh tokens are refused from now on."""
    return await _end(session, session_id, reason)


async def authenticate(
    session: AsyncSession, settings: Settings, token: str, *, resource: str | None = None
) -> Person:
    """The person of a live access token, or 401 (`invalid_token`, `token_expired`). The scopes are the
    token's, narrowed to the person's current ones. A token issued to an OAuth client is for `resource`
    (its audience, RFC 8707): accepted only where that resource is served."""
    claims = _claims(settings, token, [AUDIENCE, resource] if resource else [AUDIENCE])
    found = (
        await session.execute(
            select(User, UserSession)
            .join(UserSession, UserSession.user_id == User.id)
            .where(User.id == str(claims["sub"]), UserSession.id == str(claims["sid"]))
        )
    ).first()
    if found is None:
        raise Unauthorized("invalid access token", code="invalid_token")
    user, opened = found
    if user.disabled_at is not None:
        raise Unauthorized("this person has been disabled", code="invalid_token")
    if opened.ended_at is not None:
        raise Unauthorized("this session has ended (signed out): sign in again", code="invalid_token")
    scopes = frozenset(str(s) for s in claims["scopes"]) & frozenset(user.scopes)
    return Person(user=user, session_id=opened.id, scopes=scopes, actor=actor_of(user))


async def purge(session: AsyncSession) -> int:
    """Delete what can no longer be used, once the retention period has passed: refresh tokens expired
    since (expiry is checked before reuse, so a deleted token answers 401 just as an expired one did),
    sessions that ended since or whose every refresh token is gone (nothing can renew them), and OAuth
    authorization codes expired since."""
    cutoff = retention_cutoff()
    ended = select(UserSession.id).where(UserSession.ended_at < cutoff)
    tokens = await execute_counted(
        session,
        delete(RefreshToken).where(or_(RefreshToken.expires_at < cutoff, RefreshToken.session_id.in_(ended))),
    )
    dead = or_(
        UserSession.ended_at < cutoff,
        (UserSession.created_at < cutoff) & ~exists().where(RefreshToken.session_id == UserSession.id),
    )
    sessions = await execute_counted(session, delete(UserSession).where(dead))
    # OAuth authorization codes live a minute; once the retention period has passed they say nothing more.
    codes = await execute_counted(session, delete(OAuthCode).where(OAuthCode.expires_at < cutoff))
    return tokens + sessions + codes
