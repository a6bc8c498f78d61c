"""OAuth clients that register themselves (RFC 7591 dynamic client registration), as MCP clients do
before asking a person of an organisation to let them act for her.

A registration names where the person is sent back (`redirect_uris`: https, or plain http to a loopback
host only, as native apps listen there, RFC 8252 §7.3: `localhost`, `127.0.0.1` or `[::1]` as written, no
other spelling of the loopback range; never a fragment), and how the client proves itself
at the token endpoint: `none` (a public client: PKCE is its proof) or a secret (`client_secret_post`,
`client_secret_basic`, RFC 7591's default), which is shown once and kept as SHA-256 only. Refusals carry
RFC 7591's error codes (`invalid_redirect_uri`, `invalid_client_metadata`)."""

from __future__ import annotations

import hmac
import secrets
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncSession

from domain.documents.servicekeys import SCOPES
from domain.kernel import keys
from domain.kernel.clock import utcnow
from domain.people.models import OAuthClient

CLIENT_PREFIX = "cid_"
SECRET_PREFIX = "ccs_"
GRANT_TYPES = ("authorization_code", "refresh_token")
AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
MAX_REDIRECT_URIS = 10
MAX_URI = 2000
MAX_NAME = 200
# The loopback hosts a plain-http redirect URI may name (docs/mcp.md), as urlsplit gives the host.
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


class OAuthError(Exception):
    """An OAuth refusal: the RFC's `error` code, a description for the developer, and the HTTP status."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status

    def body(self) -> dict[str, str]:
        return {"error": self.error, "error_description": self.description}


def _metadata(description: str) -> OAuthError:
    return OAuthError("invalid_client_metadata", description)


def redirect_uri_problem(uri: str) -> str | None:
    """Why `uri` cannot be a redirect URI, or None."""
    if len(uri) > MAX_URI:
        return f"a redirect URI is at most {MAX_URI} characters"
    if any(ch.isspace() or ord(ch) < 0x20 or ch == "\x7f" for ch in uri):
        return "a redirect URI has no spaces or control characters"
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018  (raises ValueError on a bad port)
    except ValueError:
        return f"{uri!r} is not a URL"
    if "#" in uri:
        return f"{uri!r}: a redirect URI has no fragment"
    host = (parts.hostname or "").lower()
    if not host:
        return f"{uri!r} is not an absolute URL with a host"
    if parts.username is not None or parts.password is not None:
        return f"{uri!r}: a redirect URI carries no user name or password"
    if parts.scheme == "https":
        return None
    if parts.scheme == "http" and host in LOOPBACK_HOSTS:
        return None
    return f"{uri!r}: use https, or http to a loopback host (localhost, 127.0.0.1, [::1]) for a local app"


def _loopback_form(uri: str) -> tuple[str, str, str] | None:
    """A valid http loopback redirect URI without its port (host, path, query), else None."""
    if redirect_uri_problem(uri) is not None:
        return None
    parts = urlsplit(uri)
    host = (parts.hostname or "").lower()
    if parts.scheme != "http" or host not in LOOPBACK_HOSTS:
        return None
    return host, parts.path, parts.query


def redirect_uri_registered(client: OAuthClient, uri: str) -> bool:
    """Whether an authorization request may name `uri`: one of the client's redirect URIs exactly, or, for
    an http loopback one, with any port (RFC 8252 §7.3: a local app listens on the port the system gives
    it when the sign-in starts); scheme, host, path and query still match exactly. A URI registration
    would refuse today (one registered before the rule was tightened, say) matches nothing."""
    if redirect_uri_problem(uri) is not None:
        return False
    if uri in client.redirect_uris:
        return True
    form = _loopback_form(uri)
    return form is not None and any(_loopback_form(r) == form for r in client.redirect_uris)


def _strings(data: dict[str, Any], name: str) -> list[str] | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _metadata(f"{name}: give a list of strings")
    return list(value)


def _text(data: dict[str, Any], name: str, limit: int) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _metadata(f"{name}: give a string")
    value = value.strip()
    if len(value) > limit or any(ord(ch) < 0x20 or ch == "\x7f" for ch in value):
        raise _metadata(f"{name}: at most {limit} characters, no control characters")
    return value or None


def parse_scope(raw: str | None) -> list[str] | None:
    """A space-separated scope string as the known scopes in their fixed order; None when absent. An
    unknown scope raises ValueError naming it."""
    if raw is None:
        return None
    asked = raw.split()
    unknown = [s for s in asked if s not in SCOPES]
    if unknown:
        raise ValueError(f"unknown scope(s) {', '.join(unknown)}; known: {' '.join(SCOPES)}")
    return [s for s in SCOPES if s in asked]


def _checked(data: dict[str, Any]) -> dict[str, Any]:
    uris = _strings(data, "redirect_uris")
    if not uris:
        raise OAuthError("invalid_redirect_uri", "redirect_uris: give at least one redirect URI")
    if len(uris) > MAX_REDIRECT_URIS:
        raise OAuthError("invalid_redirect_uri", f"redirect_uris: at most {MAX_REDIRECT_URIS}")
    for uri in uris:
        problem = redirect_uri_problem(uri)
        if problem:
            raise OAuthError("invalid_redirect_uri", f"redirect_uris: {problem}")
    grants = _strings(data, "grant_types") or list(GRANT_TYPES)
    odd = [g for g in grants if g not in GRANT_TYPES]
    if odd or "authorization_code" not in grants:
        raise _metadata(
            f"grant_types: {', '.join(odd) or 'authorization_code is missing'}; this server offers "
            "authorization_code (required) and refresh_token"
        )
    responses = _strings(data, "response_types")
    if responses is not None and responses != ["code"]:
        raise _metadata('response_types: only ["code"] is offered')
    method = data.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in AUTH_METHODS:
        raise _metadata(f"token_endpoint_auth_method: one of {', '.join(AUTH_METHODS)}")
    scope = _text(data, "scope", 500)
    try:
        scopes = parse_scope(scope)
    except ValueError as exc:
        raise _metadata(f"scope: {exc}") from None
    return {
        "redirect_uris": uris,
        "grant_types": [g for g in GRANT_TYPES if g in grants],
        "token_endpoint_auth_method": method,
        "client_name": _text(data, "client_name", MAX_NAME),
        "scope": " ".join(scopes) if scopes else None,
    }


async def register(session: AsyncSession, data: dict[str, Any]) -> dict[str, Any]:
    """Register a client from its metadata (RFC 7591 §2); the client information response (§3.2.1). Other
    metadata than what this server uses (logo_uri, contacts…) is ignored, as §2 allows."""
    found = _checked(data)
    now = utcnow()
    client = OAuthClient(
        id=CLIENT_PREFIX + secrets.token_urlsafe(18),
        client_name=found["client_name"],
        redirect_uris=found["redirect_uris"],
        grant_types=found["grant_types"],
        scope=found["scope"],
        token_endpoint_auth_method=found["token_endpoint_auth_method"],
        created_at=now,
    )
    answer: dict[str, Any] = {"client_id": client.id, "client_id_issued_at": int(now.timestamp())}
    if client.token_endpoint_auth_method != "none":
        secret = SECRET_PREFIX + secrets.token_urlsafe(32)
        client.secret_hash = keys.hash_key(secret)
        answer.update(client_secret=secret, client_secret_expires_at=0)
    session.add(client)
    await session.flush()
    answer.update(
        redirect_uris=client.redirect_uris,
        grant_types=client.grant_types,
        response_types=["code"],
        token_endpoint_auth_method=client.token_endpoint_auth_method,
    )
    if client.client_name:
        answer["client_name"] = client.client_name
    if client.scope:
        answer["scope"] = client.scope
    return answer


async def authenticate(
    session: AsyncSession, *, client_id: str | None, client_secret: str | None, basic: bool
) -> OAuthClient:
    """The client a token request comes from (RFC 6749 §2.3): a public client names itself, a
    confidential one proves itself with its secret, in the body or with HTTP Basic (`basic`) as it
    registered. `invalid_client` (401) for anything else."""
    if not client_id:  # no client authentication at all (RFC 6749 §5.2)
        raise OAuthError(
            "invalid_client", "client_id: name the client (or authenticate with HTTP Basic)", 401
        )
    client = await session.get(OAuthClient, client_id) if len(client_id) <= 64 else None
    if client is None:
        raise OAuthError("invalid_client", "unknown client: register it first (POST /oauth/register)", 401)
    if client.token_endpoint_auth_method == "none":
        return client
    if basic != (client.token_endpoint_auth_method == "client_secret_basic"):
        raise OAuthError(
            "invalid_client", f"this client authenticates with {client.token_endpoint_auth_method}", 401
        )
    if not client_secret or not client.secret_hash:
        raise OAuthError("invalid_client", "client authentication failed: give the client secret", 401)
    if not hmac.compare_digest(keys.hash_key(client_secret), client.secret_hash):
        raise OAuthError("invalid_client", "client authentication failed", 401)
    return client
