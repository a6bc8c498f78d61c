"""The authorization code grant with PKCE (OAuth 2.1, RFC 7636 S256 only) and the refresh grant, for
clients registered in oauth_clients.py acting for a person of an organisation.

An authorization request is checked in full before anything is sent to its redirect URI: every refusal of
the request is shown to the person (`NotRedirectable`, with its OAuth error code). Clients register
themselves, so their redirect URIs are anyone's, and sending a bad request's error there would make this
server an open redirector (RFC 9700 §4.11.2). Only what the person decided on the consent page of a good
request (deny, no scope left ticked, none held) goes back to the client (`Redirectable`, RFC 6749
§4.1.2.1). An approved request gets
a code (SHA-256 only) bound to the client, redirect URI, PKCE challenge, person, the scopes granted (those
asked that the person holds) and the resource (RFC 8707); it works once, for `CODE_SECONDS`. Its exchange
opens a session of the person (user_sessions.py), whose access tokens are the sign-in's JWTs with the
granted scopes and the resource as audience, and whose refresh tokens rotate (a reused one ends the
session, so the whole grant). A code presented twice ends the session its first exchange opened."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.documents.models import Organisation
from domain.documents.servicekeys import SCOPES
from domain.kernel import audit, keys
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.errors import Unauthorized
from domain.kernel.ids import new_id
from domain.kernel.settings import Settings
from domain.people import user_sessions
from domain.people.models import OAuthClient, OAuthCode, User, UserSession
from domain.people.oauth_clients import OAuthError, parse_scope, redirect_uri_registered

CODE_PREFIX = "cac_"
CODE_SECONDS = 60
VERIFIER = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")  # RFC 7636 §4.1
CHALLENGE = re.compile(r"^[A-Za-z0-9\-_]{43}$")  # BASE64URL(SHA-256), no padding
MAX_STATE = 1000
# The parameters of an authorization request, carried by the consent form from the page to its post.
REQUEST_PARAMS = (
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
    "resource",
)


class NotRedirectable(Exception):
    """A refusal of the request itself, shown to the person (never sent to the redirect URI): `error` is
    its OAuth error code, the message says what is wrong."""

    def __init__(self, description: str, error: str = "invalid_request") -> None:
        super().__init__(description)
        self.error = error


class Redirectable(Exception):
    """The person's refusal of a good request, sent back to the client's redirect URI as `error` and
    `error_description` (with the request's `state`)."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


@dataclass(frozen=True)
class AuthorizationRequest:
    client: OAuthClient
    redirect_uri: str
    state: str | None
    code_challenge: str
    scopes: list[str]
    resource: str

    def params(self) -> dict[str, str]:
        """The request as form fields, for the consent page to post back."""
        found = {
            "response_type": "code",
            "client_id": self.client.id,
            "redirect_uri": self.redirect_uri,
            "scope": " ".join(self.scopes),
            "code_challenge": self.code_challenge,
            "code_challenge_method": "S256",
            "resource": self.resource,
        }
        if self.state is not None:
            found["state"] = self.state
        return found


@dataclass(frozen=True)
class Refused:
    """A refusal whose side effect (a session ended) must commit before the error answers."""

    error: OAuthError


def s256(verifier: str) -> str:
    """The PKCE S256 challenge of a verifier: BASE64URL(SHA-256(verifier)) without padding."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def same_resource(a: str, b: str) -> bool:
    """Resource indicators compared as MCP clients send them (a trailing slash is not a difference)."""
    return a.rstrip("/") == b.rstrip("/")


def with_query(uri: str, params: Mapping[str, str | None]) -> str:
    """`uri` with `params` added to its query (RFC 6749 §3.1.2: the registered query is kept)."""
    parts = urlsplit(uri)
    query = parse_qsl(parts.query, keep_blank_values=True)
    query += [(k, v) for k, v in params.items() if v is not None]
    return urlunsplit(parts._replace(query=urlencode(query)))


async def check_request(
    session: AsyncSession, params: Mapping[str, str], *, resource: str, repeated: frozenset[str] = frozenset()
) -> AuthorizationRequest:
    """An authorization request (RFC 6749 §4.1.1 with PKCE and RFC 8707's resource) checked against the
    registered client and this server's `resource`."""
    if repeated & {"client_id", "redirect_uri"}:
        raise NotRedirectable(f"{sorted(repeated)[0]}: give this parameter once")
    client_id = params.get("client_id", "")
    client = await session.get(OAuthClient, client_id) if client_id and len(client_id) <= 64 else None
    if client is None:
        raise NotRedirectable(
            "This sign-in link names no application registered here (unknown client_id). Start again "
            "from your application.",
            "invalid_client",
        )
    given = params.get("redirect_uri")
    if given is None and len(client.redirect_uris) == 1:
        given = client.redirect_uris[0]
    if given is None or not redirect_uri_registered(client, given):
        raise NotRedirectable(
            "The application asked to send you back to an address it did not register (redirect_uri), so "
            "this sign-in stops here."
        )
    state = params.get("state")
    if state is not None and len(state) > MAX_STATE:
        raise NotRedirectable(f"state: at most {MAX_STATE} characters")
    return _checked(client, given, state, params, resource, repeated)


def _refused(error: str, description: str) -> NotRedirectable:
    return NotRedirectable(description, error)


def _checked(
    client: OAuthClient,
    redirect_uri: str,
    state: str | None,
    params: Mapping[str, str],
    resource: str,
    repeated: frozenset[str],
) -> AuthorizationRequest:
    if repeated:
        raise _refused("invalid_request", f"{sorted(repeated)[0]}: give this parameter once")
    response_type = params.get("response_type")
    if response_type != "code":
        if response_type is None:
            raise _refused("invalid_request", "response_type: give response_type=code")
        raise _refused("unsupported_response_type", "only response_type=code is offered")
    if "authorization_code" not in client.grant_types:
        raise _refused("unauthorized_client", "this client did not register the authorization_code grant")
    method = params.get("code_challenge_method")
    if method != "S256":
        raise _refused(
            "invalid_request",
            "code_challenge_method: PKCE with S256 is required (plain is refused)"
            if method
            else "code_challenge_method: PKCE is required; give code_challenge_method=S256",
        )
    challenge = params.get("code_challenge", "")
    if not CHALLENGE.match(challenge):
        raise _refused(
            "invalid_request", "code_challenge: the base64url SHA-256 of the verifier (43 characters)"
        )
    asked_scope = params.get("scope")
    if asked_scope is not None:  # refresh tokens are always issued: offline_access asks for nothing more
        asked_scope = " ".join(s for s in asked_scope.split() if s != "offline_access") or None
    try:
        scopes = parse_scope(asked_scope) or parse_scope(client.scope) or list(SCOPES)
    except ValueError as exc:
        raise _refused("invalid_scope", str(exc)) from None
    asked = params.get("resource")
    if asked is not None and not same_resource(asked, resource):
        raise _refused("invalid_target", f"resource: this server's resource is {resource}")
    return AuthorizationRequest(client, redirect_uri, state, challenge, scopes, resource)


def chosen_scopes(req: AuthorizationRequest, ticked: list[str]) -> list[str]:
    """The scopes the person left ticked on the consent page, in the fixed order. Only scopes the request
    asked were offered: any other (a forged field) raises ValueError naming it, and is never granted."""
    extra = sorted(set(ticked) - set(req.scopes))
    if extra:
        raise ValueError(f"not offered to this application: {', '.join(extra)}")
    return [s for s in req.scopes if s in ticked]


def granted_scopes(asked: list[str], user: User) -> list[str]:
    """What the client gets: the scopes asked (and left ticked) that the person holds."""
    return [s for s in asked if s in user.scopes]


async def issue_code(
    session: AsyncSession, ctx: Context, req: AuthorizationRequest, user: User, chosen: list[str]
) -> str:
    """A code for an approved request (its secret: only its hash is kept), carrying the scopes the person
    `chosen` (see chosen_scopes) that she holds."""
    scopes = granted_scopes(chosen, user)
    if not scopes:
        raise Redirectable("access_denied", "the person holds none of the scopes chosen")
    code = CODE_PREFIX + secrets.token_urlsafe(32)
    now = utcnow()
    row = OAuthCode(
        id=new_id(),
        code_hash=keys.hash_key(code),
        client_id=req.client.id,
        user_id=user.id,
        redirect_uri=req.redirect_uri,
        code_challenge=req.code_challenge,
        scopes=scopes,
        resource=req.resource,
        created_at=now,
        expires_at=now + timedelta(seconds=CODE_SECONDS),
    )
    session.add(row)
    person = Context(actor=user_sessions.actor_of(user), request_id=ctx.request_id, country=ctx.country)
    audit.record(
        session, person, "people.oauth.authorize", "oauth_client", req.client.id, after={"scopes": scopes}
    )
    return code


def _grant(description: str) -> OAuthError:
    return OAuthError("invalid_grant", description)


def _required(form: Mapping[str, str], name: str) -> str:
    value = form.get(name)
    if not value:
        raise OAuthError("invalid_request", f"{name}: required for this grant")
    return value


async def _end_session(session: AsyncSession, session_id: str | None) -> None:
    if session_id:
        await session.execute(
            update(UserSession)
            .where(UserSession.id == session_id, UserSession.ended_at.is_(None))
            .values(ended_at=utcnow(), end_reason="code_reused")
        )


async def exchange_code(
    session: AsyncSession,
    ctx: Context,
    settings: Settings,
    client: OAuthClient,
    form: Mapping[str, str],
) -> user_sessions.TokenPair | Refused:
    """grant_type=authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.6): the session's first token pair."""
    code = _required(form, "code")
    redirect_uri = _required(form, "redirect_uri")
    verifier = _required(form, "code_verifier")
    if not VERIFIER.match(verifier):
        raise OAuthError("invalid_request", "code_verifier: 43 to 128 characters of A-Z a-z 0-9 - . _ ~")
    row = await session.scalar(select(OAuthCode).where(OAuthCode.code_hash == keys.hash_key(code)))
    if row is None or row.client_id != client.id:
        raise _grant("unknown authorization code (or one issued to another client)")
    if row.used_at is not None:
        await _end_session(session, row.session_id)  # someone else may hold the code: stop what it gave
        return Refused(_grant("this authorization code was already used; the tokens it gave are revoked"))
    now = utcnow()
    if row.expires_at <= now:
        raise _grant("this authorization code has expired: authorize again")
    if row.redirect_uri != redirect_uri:
        raise _grant("redirect_uri: not the one of the authorization request")
    if not hmac.compare_digest(s256(verifier), row.code_challenge):
        raise _grant("code_verifier: does not match the code_challenge of the authorization request")
    asked = form.get("resource")
    if asked is not None and not same_resource(asked, row.resource):
        raise OAuthError("invalid_target", f"resource: this code is for {row.resource}")
    used = await session.execute(
        update(OAuthCode).where(OAuthCode.id == row.id, OAuthCode.used_at.is_(None)).values(used_at=now)
    )
    if not getattr(used, "rowcount", 0):
        raise _grant("this authorization code was already used")
    found = (
        await session.execute(
            select(User, Organisation)
            .join(Organisation, Organisation.id == User.org_id)
            .where(User.id == row.user_id, User.disabled_at.is_(None))
        )
    ).first()
    if found is None:
        raise _grant("the person who approved this code can no longer sign in")
    user, org = found
    session_id = new_id()
    pair = await user_sessions.open_session(
        session,
        ctx,
        settings,
        user,
        org,
        client_id=client.id,
        scopes=row.scopes,
        audience=row.resource,
        session_id=session_id,
    )
    row.session_id = session_id
    return pair


async def refresh(
    session: AsyncSession, settings: Settings, client: OAuthClient, form: Mapping[str, str]
) -> user_sessions.TokenPair | Refused:
    """grant_type=refresh_token (RFC 6749 §6): rotation; a token presented twice ends its session. A
    `scope` parameter narrows the new access token (not the grant: the next refresh without one gets the
    whole grant again); a scope outside the grant is invalid_scope, and the refresh token stays unused."""
    token = _required(form, "refresh_token")
    if "refresh_token" not in client.grant_types:
        raise OAuthError("unauthorized_client", "this client did not register the refresh_token grant")
    asked = form.get("scope")
    if asked is not None:  # as on authorization: offline_access asks for nothing more
        asked = " ".join(s for s in asked.split() if s != "offline_access") or None
    try:
        narrow = parse_scope(asked)
    except ValueError as exc:
        raise OAuthError("invalid_scope", str(exc)) from None
    try:
        result = await user_sessions.refresh(session, settings, token, client_id=client.id, narrow=narrow)
    except Unauthorized as exc:
        raise _grant(exc.detail) from None
    except user_sessions.NotGranted as exc:
        raise OAuthError("invalid_scope", str(exc)) from None
    if isinstance(result, user_sessions.Refusal):
        return Refused(_grant(result.error.detail))
    return result


async def revoke(
    session: AsyncSession, settings: Settings, client: OAuthClient, token: str, *, resource: str
) -> None:
    """RFC 7009: end the grant (the session) an access or refresh token of this client belongs to. An
    unknown, expired or already revoked token is no error (§2.2); another client's token is refused."""
    opened = await user_sessions.session_of(session, settings, token.strip(), resource=resource)
    if opened is None:
        return
    if opened.client_id != client.id:
        raise OAuthError("invalid_request", "this token was not issued to this client")
    await user_sessions.end_session(session, opened.id, "revoked")
