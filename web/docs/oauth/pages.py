"""The authorization endpoint (GET/POST /oauth/authorize): the sign-in and consent page a person of an
organisation sees when an MCP client asks to act for her, and its form.

The page is shown only for a request that checks out in full: a registered client, one of its own
redirect URIs (a loopback one with any port), PKCE, a known scope, this server's resource. Any refusal of
the request is a page naming the error, never a redirect: clients register themselves, so their redirect
URIs are anyone's (RFC 9700 §4.11.2). Only the person's own refusal goes back to the client (`error`,
`state`, and `iss` per RFC 9207). The form carries the request again (checked
again on post), the person's email and password, and a CSRF token bound to a cookie the page sets
(HttpOnly, SameSite=Strict, path /oauth). Approving signs the person in (the sign-in's rate limits apply)
and sends her back with a code for the scopes she left ticked (and holds); denying, or unticking every
scope, sends `error=access_denied`."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from multidict import MultiMapping

from domain.kernel.errors import DomainError, RateLimited
from domain.people import oauth_grants
from domain.people import user_sessions as sessions
from domain.people.oauth_grants import AuthorizationRequest, NotRedirectable, Redirectable
from web.docs.oauth import html, urls
from web.docs.oauth.schemas import AuthorizeForm, AuthorizeQuery
from web.kernel.forms import posted
from web.kernel.html import SECURITY_HEADERS
from web.kernel.request import client_address, context, rate_limits, runtime
from web.kernel.routing import Routes

routes = Routes()

HTML = "text/html"
COOKIE = "concord_oauth"
GRANT = "grant"  # the consent page's checkboxes: one per scope offered, ticked by default
TAGS = ["OAuth"]
ERRORS = {
    400: "A request that does not check out (unknown client, unregistered redirect URI, no PKCE S256, an "
    "unknown scope, another resource...): a page naming the error, never a redirect",
    403: "The form's CSRF token is missing or stale (a page)",
}


def _csrf(request: web.Request, cookie: str) -> str:
    secret = sessions.signing_secret(runtime(request).settings).encode()
    return hmac.new(secret, f"oauth-consent:{cookie}".encode(), hashlib.sha256).hexdigest()


def _headers(req: AuthorizationRequest) -> dict[str, str]:
    """The page may post its form to itself, which redirects to the client: form-action names both."""
    parts = urlsplit(req.redirect_uri)
    csp = SECURITY_HEADERS["Content-Security-Policy"].replace(
        "form-action 'self'", f"form-action 'self' {parts.scheme}://{parts.netloc}"
    )
    return {"Content-Security-Policy": csp}


def _params(data: MultiMapping[Any]) -> tuple[dict[str, str], frozenset[str]]:
    """The request's parameters (first values, text only) and those given more than once."""
    found = {k: v for k in oauth_grants.REQUEST_PARAMS if isinstance(v := data.get(k), str)}
    repeated = frozenset(k for k in oauth_grants.REQUEST_PARAMS if len(data.getall(k, [])) > 1)
    return found, repeated


def _back(request: web.Request, redirect_uri: str, params: dict[str, str | None]) -> web.HTTPSeeOther:
    """The redirect to the client, with the issuer (RFC 9207)."""
    found = {**params, "iss": urls.issuer(request)}
    return web.HTTPSeeOther(oauth_grants.with_query(redirect_uri, found))


async def _checked(request: web.Request, data: MultiMapping[Any]) -> AuthorizationRequest:
    bad = next((k for k, v in data.items() if isinstance(v, str) and "\x00" in v), None)
    if bad is not None:
        raise NotRedirectable(f"{bad}: NUL characters are not allowed")
    params, repeated = _params(data)
    async with runtime(request).db.read() as session:
        return await oauth_grants.check_request(
            session, params, resource=urls.mcp_resource(request), repeated=repeated
        )


def _refused(exc: NotRedirectable) -> web.Response:
    """A refusal of the request: a page, never a redirect (RFC 9700 §4.11.2)."""
    return html.refusal("This sign-in cannot go on", str(exc), 400, error=exc.error)


@routes.route(
    "GET",
    "/oauth/authorize",
    summary="Authorization endpoint: the sign-in and consent page for an MCP client's request (HTML); "
    "a request that does not check out is a page saying why, never a redirect",
    tags=TAGS,
    errors=ERRORS,
    content_type=HTML,
)
async def authorize_page(request: web.Request) -> web.StreamResponse:
    try:
        req = await _checked(request, request.query)
    except NotRedirectable as exc:
        return _refused(exc)
    cookie = request.cookies.get(COOKIE) or secrets.token_urlsafe(24)
    response = html.consent(req, _csrf(request, cookie), headers=_headers(req))
    if request.cookies.get(COOKIE) != cookie:
        secure = request.secure or (runtime(request).settings.public_url or "").startswith("https:")
        response.set_cookie(COOKIE, cookie, path="/oauth", httponly=True, samesite="Strict", secure=secure)
    return response


@routes.route(
    "POST",
    "/oauth/authorize",
    summary="The consent page's form: sign in and allow the ticked scopes (303 to the client's redirect URI "
    "with code, state and iss) or deny, or untick every scope (303 with error=access_denied); wrong "
    "credentials, or a scope that was not offered, show the page again",
    tags=TAGS,
    documented_body=AuthorizeForm,
    body_media="application/x-www-form-urlencoded",
    errors={
        **ERRORS,
        400: ERRORS[400] + "; or a grant field naming a scope that was not offered: the page again",
        401: "Wrong email or password: the page again, saying so",
        429: "Too many sign-ins from this address or for this email: the page again, saying so",
    },
    content_type=HTML,
)
async def authorize_form(request: web.Request) -> web.StreamResponse:
    data = await posted(request)
    try:
        req = await _checked(request, data)
    except NotRedirectable as exc:
        return _refused(exc)
    cookie = request.cookies.get(COOKIE)
    given = data.get("csrf")
    if not cookie or not isinstance(given, str) or not hmac.compare_digest(_csrf(request, cookie), given):
        return html.refusal(
            "This form is stale",
            "The form did not come from this page, or the page is too old: go back to your application "
            "and start the sign-in again.",
            403,
        )
    decision = data.get("decision")
    ticked = [v for v in data.getall(GRANT, []) if isinstance(v, str)]
    if decision == "deny" or (decision == "approve" and not ticked):
        description = "the person denied the request" if decision == "deny" else "the person granted no scope"
        raise _back(
            request,
            req.redirect_uri,
            {"error": "access_denied", "error_description": description, "state": req.state},
        )
    fields = {k: v for k, v in data.items() if isinstance(v, str)}
    email, password = fields.get("email", ""), fields.get("password", "")
    organisation = fields.get("organisation", "")

    def again(error: str, status: int) -> web.Response:
        return html.consent(
            req,
            _csrf(request, cookie or ""),
            error=error[:1].upper() + error[1:],
            email=email,
            organisation=organisation,
            ticked=ticked,
            status=status,
            headers=_headers(req),
        )

    if decision != "approve":
        return again("Choose Sign in and allow, or Deny.", 400)
    try:
        chosen = oauth_grants.chosen_scopes(req, ticked)
    except ValueError as exc:  # a forged field: refused, never granted
        return again(f"{GRANT}: {exc}", 400)
    if not email.strip() or not password:
        return again("Give your email and password to allow the application.", 401)
    if len(email) > 320 or len(password) > 1024 or len(organisation) > 200:  # as POST /api/auth/login
        return again("An email is at most 320 characters, a password 1024, an organisation 200.", 400)
    rt = runtime(request)
    try:
        await rate_limits(request).hit("login", rt.settings.rate_limit_login, client_address(request))
        await rate_limits(request).hit("login-email", rt.settings.rate_limit_login, email.strip().lower())
    except RateLimited as exc:
        response = again(exc.detail, exc.status)
        response.headers["Retry-After"] = str(exc.retry_after)
        return response
    try:
        async with rt.db.transaction() as session:
            user, _org = await sessions.verify_credentials(
                session, email=email, password=password, organisation=organisation or None
            )
            code = await oauth_grants.issue_code(session, context(request), req, user, chosen)
    except DomainError as exc:
        return again(exc.detail, exc.status)
    except Redirectable as exc:
        params = {"error": exc.error, "error_description": exc.description, "state": req.state}
        raise _back(request, req.redirect_uri, params) from None
    raise _back(request, req.redirect_uri, {"code": code, "state": req.state})


def document(spec: dict[str, Any]) -> None:
    """The authorization request's query parameters in /openapi.json (the page reads them itself, so a
    bad one is a page or a redirect, not a 400 problem)."""
    schema = AuthorizeQuery.model_json_schema()
    required = set(schema.get("required", []))
    operation = spec["paths"]["/oauth/authorize"]["get"]
    operation["parameters"] = [
        {
            "name": name,
            "in": "query",
            "required": name in required,
            "schema": {k: v for k, v in prop.items() if k not in ("title", "description")},
        }
        for name, prop in schema["properties"].items()
    ]
    spec["paths"]["/oauth/authorize"]["post"]["responses"]["303"] = {
        "description": "Back to the client's redirect URI: code, state and iss, or error=access_denied"
    }
