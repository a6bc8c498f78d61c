"""OAuth 2.1 for MCP clients (the MCP authorization spec): discovery, dynamic client registration and the
token endpoint. The sign-in and consent page is web/docs/oauth/pages.py; the rules are in
domain/people/oauth_clients.py and oauth_grants.py.

These endpoints answer OAuth's error body ({error, error_description}, RFC 6749 §5.2 / RFC 7591 §3.2.2)
rather than problem+json, since OAuth clients read that; token responses are never cached."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Collection
from functools import wraps
from urllib.parse import unquote

from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncSession

from domain.documents.servicekeys import SCOPES
from domain.kernel.errors import DomainError, RateLimited
from domain.people import oauth_clients, oauth_grants, user_sessions
from domain.people.models import OAuthClient
from domain.people.oauth_clients import OAuthError
from web.docs.oauth import urls
from web.docs.oauth.schemas import (
    AuthorizationServerMetadata,
    ClientInformation,
    ClientMetadata,
    OAuthErrorBody,
    ProtectedResourceMetadata,
    Revoked,
    RevokeRequest,
    TokenRequest,
    TokenResponse,
)
from web.kernel.forms import posted
from web.kernel.replies import Answer, Reply
from web.kernel.request import client_address, context, rate_limits, runtime
from web.kernel.routing import Endpoint, Routes, json_response, nul_field, read_json

routes = Routes()

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
FORM = "application/x-www-form-urlencoded"
TAGS = ["OAuth"]
DOCUMENTATION = "docs/mcp.md"


def oauth_error(exc: OAuthError, headers: dict[str, str] | None = None) -> web.Response:
    # A refusal in OAuth's own error body (the operation's error_model), not the operation's answer.
    return json_response(exc.body(), status=exc.status, headers={**NO_STORE, **(headers or {})})


def speaks_oauth(fn: Endpoint) -> Endpoint:
    """Every refusal of the endpoint as OAuth's error body: its own, the app's (a rate limit) and aiohttp's
    (a body too large)."""

    @wraps(fn)
    async def run(request: web.Request) -> Answer:
        try:
            return await fn(request)  # type: ignore[no-any-return]
        except OAuthError as exc:
            headers = {"WWW-Authenticate": 'Basic realm="concord"'} if exc.status == 401 else None
            return oauth_error(exc, headers)
        except RateLimited as exc:
            found = OAuthError("slow_down", exc.detail, exc.status)
            return oauth_error(found, {"Retry-After": str(exc.retry_after)})
        except DomainError as exc:
            return oauth_error(OAuthError("invalid_request", exc.detail, exc.status))
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            return oauth_error(OAuthError("invalid_request", exc.reason, exc.status))

    return run


# ---- discovery --------------------------------------------------------------------------------------


def _protected_resource(request: web.Request) -> Reply:
    base = urls.base_url(request)
    body = {
        "resource": urls.mcp_resource(request),
        "authorization_servers": [urls.issuer(request)],
        "scopes_supported": list(SCOPES),
        "bearer_methods_supported": ["header"],
        "resource_name": "Concord documents (MCP)",
        "resource_documentation": f"{base}/docs",
    }
    return Reply(body, headers={"Cache-Control": "public, max-age=300"})


@routes.route(
    "GET",
    "/.well-known/oauth-protected-resource/mcp",
    summary="Protected resource metadata of the MCP endpoint (RFC 9728): its URL, its authorization "
    "server and scopes",
    tags=TAGS,
    response=ProtectedResourceMetadata,
)
async def protected_resource_mcp(request: web.Request) -> Answer:
    return _protected_resource(request)


@routes.route(
    "GET",
    "/.well-known/oauth-protected-resource",
    summary="Protected resource metadata (RFC 9728), at the root: the same document as .../mcp",
    tags=TAGS,
    response=ProtectedResourceMetadata,
)
async def protected_resource(request: web.Request) -> Answer:
    return _protected_resource(request)


@routes.route(
    "GET",
    "/.well-known/oauth-authorization-server",
    summary="Authorization server metadata (RFC 8414): endpoints, PKCE S256, grants, client auth methods",
    tags=TAGS,
    response=AuthorizationServerMetadata,
)
async def authorization_server(request: web.Request) -> Answer:
    base = urls.base_url(request)
    body = {
        "issuer": urls.issuer(request),
        "authorization_endpoint": f"{base}/oauth/authorize",
        "token_endpoint": f"{base}/oauth/token",
        "registration_endpoint": f"{base}/oauth/register",
        "revocation_endpoint": f"{base}/oauth/revoke",
        "revocation_endpoint_auth_methods_supported": list(oauth_clients.AUTH_METHODS),
        "scopes_supported": list(SCOPES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": list(oauth_clients.GRANT_TYPES),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": list(oauth_clients.AUTH_METHODS),
        "authorization_response_iss_parameter_supported": True,
        "service_documentation": f"{base}/docs",
    }
    return Reply(body, headers={"Cache-Control": "public, max-age=300"})


# ---- registration -----------------------------------------------------------------------------------


@routes.route(
    "POST",
    "/oauth/register",
    summary="Dynamic client registration (RFC 7591): an MCP client registers its redirect URIs; a secret "
    "is issued unless token_endpoint_auth_method is none",
    tags=TAGS,
    documented_body=ClientMetadata,
    response=ClientInformation,
    status=201,
    error_model=OAuthErrorBody,
    errors={
        400: "invalid_redirect_uri, invalid_client_metadata, or a body that is not a JSON object",
        413: "The body is too large",
        415: "invalid_client_metadata: the body is not sent as application/json",
        429: "Too many registrations from this address (slow_down); see Retry-After",
    },
)
@speaks_oauth
async def register(request: web.Request) -> Answer:
    rt = runtime(request)
    await rate_limits(request).hit("oauth-register", rt.settings.rate_limit_register, client_address(request))
    try:
        data = await read_json(request)
    except DomainError as exc:  # not JSON (400), or not sent as JSON (415)
        raise OAuthError("invalid_client_metadata", exc.detail, exc.status) from None
    bad = nul_field(data)
    if bad:
        raise OAuthError("invalid_client_metadata", f"{bad}: NUL characters are not allowed")
    async with rt.db.transaction() as session:
        found = await oauth_clients.register(session, data)
    return Reply(found, headers=NO_STORE)


# ---- token ------------------------------------------------------------------------------------------


def _basic(request: web.Request) -> tuple[str, str] | None:
    """Client credentials from HTTP Basic (RFC 6749 §2.3.1: each part form-urlencoded first)."""
    auth = request.headers.get("Authorization", "")
    if auth[:6].lower() != "basic ":
        return None
    try:
        decoded = base64.b64decode(auth[6:].strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise OAuthError("invalid_client", "Authorization: Basic is not base64 of id:secret", 401) from None
    client_id, sep, secret = decoded.partition(":")
    if not sep:
        raise OAuthError("invalid_client", "Authorization: Basic is not base64 of id:secret", 401)
    return unquote(client_id.replace("+", " ")), unquote(secret.replace("+", " "))


async def _form(request: web.Request, known: Collection[str]) -> dict[str, str]:
    if request.content_type != FORM:
        raise OAuthError("invalid_request", f"send the parameters as {FORM}")
    data = await posted(request)
    found: dict[str, str] = {}
    for name in data:
        if name not in known:
            raise OAuthError("invalid_request", f"{name}: not a parameter of this endpoint")
        values = data.getall(name)
        if len(values) > 1:
            raise OAuthError("invalid_request", f"{name}: give this parameter once")
        value = values[0]
        if not isinstance(value, str) or len(value) > 4000 or "\x00" in value:
            raise OAuthError("invalid_request", f"{name}: a short text without NUL characters")
        found[name] = value
    return found


async def _client(request: web.Request, session: AsyncSession, form: dict[str, str]) -> OAuthClient:
    """The client of a token or revocation request, authenticated as it registered."""
    basic = _basic(request)
    if basic is not None and (form.get("client_secret") or form.get("client_id", basic[0]) != basic[0]):
        raise OAuthError("invalid_request", "authenticate the client one way: HTTP Basic or the body")
    client_id, secret = basic if basic is not None else (form.get("client_id"), form.get("client_secret"))
    return await oauth_clients.authenticate(
        session, client_id=client_id, client_secret=secret, basic=basic is not None
    )


@routes.route(
    "POST",
    "/oauth/token",
    summary="Token endpoint (RFC 6749): an authorization code with its PKCE verifier, or a refresh token "
    "(rotated), for an access token to the MCP endpoint",
    tags=TAGS,
    documented_body=TokenRequest,
    body_media=FORM,
    response=TokenResponse,
    error_model=OAuthErrorBody,
    errors={
        400: "invalid_request, invalid_grant (unknown, used, expired or mismatched code; wrong verifier; "
        "a used refresh token revokes its grant), unsupported_grant_type, invalid_scope, invalid_target",
        401: "invalid_client: unknown client, or its secret is missing or wrong",
        413: "The body is too large",
        429: "Too many token requests from this address (slow_down); see Retry-After",
    },
)
@speaks_oauth
async def token(request: web.Request) -> Answer:
    rt = runtime(request)
    await rate_limits(request).hit("oauth-token", rt.settings.rate_limit_login * 6, client_address(request))
    form = await _form(request, TokenRequest.model_fields)
    grant = form.get("grant_type")
    if grant not in oauth_clients.GRANT_TYPES:
        if not grant:
            raise OAuthError("invalid_request", "grant_type: required")
        raise OAuthError("unsupported_grant_type", "grant_type: authorization_code or refresh_token")
    async with rt.db.transaction() as session:
        client = await _client(request, session, form)
        result: user_sessions.TokenPair | oauth_grants.Refused
        if grant == "authorization_code":
            result = await oauth_grants.exchange_code(session, context(request), rt.settings, client, form)
        else:
            result = await oauth_grants.refresh(session, rt.settings, client, form)
    if isinstance(result, oauth_grants.Refused):
        raise result.error  # after the revocation it caused is committed
    return Reply(TokenResponse.of(result), headers=NO_STORE)


@routes.route(
    "POST",
    "/oauth/revoke",
    summary="Token revocation (RFC 7009): an access or refresh token of the client ends its grant; an "
    "unknown or expired token is no error",
    tags=TAGS,
    documented_body=RevokeRequest,
    body_media=FORM,
    response=Revoked,
    error_model=OAuthErrorBody,
    errors={
        400: "invalid_request: no token, or a token issued to another client",
        401: "invalid_client: unknown client, or its secret is missing or wrong",
        413: "The body is too large",
        429: "Too many requests from this address (slow_down); see Retry-After",
    },
)
@speaks_oauth
async def revoke(request: web.Request) -> Answer:
    rt = runtime(request)
    await rate_limits(request).hit("oauth-token", rt.settings.rate_limit_login * 6, client_address(request))
    form = await _form(request, RevokeRequest.model_fields)
    token = form.get("token")
    if not token:
        raise OAuthError("invalid_request", "token: required")
    async with rt.db.transaction() as session:
        client = await _client(request, session, form)
        await oauth_grants.revoke(session, rt.settings, client, token, resource=urls.mcp_resource(request))
    return Reply({}, headers=NO_STORE)
