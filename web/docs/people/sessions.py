"""Browser sessions of an organisation's people (spec §5.2): sign in, refresh, sign out. The access token
a sign-in returns is accepted wherever a service key is (web/docs/auth.py)."""

from __future__ import annotations

from aiohttp import web

from domain.people import user_sessions as sessions
from web.docs.auth import bearer_token, person_of
from web.docs.schemas import LoggedOut, LoginBody, LogoutBody, RefreshBody, TokenPair
from web.kernel.replies import Answer, Reply
from web.kernel.request import client_address, context, rate_limits, runtime
from web.kernel.routing import Routes

routes = Routes()

NO_STORE = {"Cache-Control": "no-store"}  # token responses are never cached (RFC 6749 §5.1)


@routes.route(
    "POST",
    "/api/auth/login",
    summary="Sign a person in with email and password: a short-lived access token and a refresh token",
    tags=["Auth"],
    body=LoginBody,
    response=TokenPair,
    errors={
        401: "Wrong email or password (the same answer for both)",
        429: "Too many sign-ins from this address or for this email; see Retry-After",
    },
)
async def login(request: web.Request, body: LoginBody) -> Answer:
    rt = runtime(request)
    limit = rt.settings.rate_limit_login
    await rate_limits(request).hit("login", limit, client_address(request))
    await rate_limits(request).hit("login-email", limit, body.email.strip().lower())
    async with rt.db.transaction() as session:
        pair = await sessions.login(
            session,
            context(request),
            rt.settings,
            email=body.email,
            password=body.password,
            organisation=body.organisation,
        )
    return Reply(TokenPair.of(pair), headers=NO_STORE)


@routes.route(
    "POST",
    "/api/auth/refresh",
    summary="Trade a refresh token for a new pair; the old one is used up (presenting it again ends the "
    "session)",
    tags=["Auth"],
    body=RefreshBody,
    response=TokenPair,
    errors={
        401: "Unknown, expired or already used refresh token, or an ended session",
        429: "Too many refreshes from this address",
    },
)
async def refresh(request: web.Request, body: RefreshBody) -> Answer:
    rt = runtime(request)
    await rate_limits(request).hit("refresh", rt.settings.rate_limit_login * 6, client_address(request))
    async with rt.db.transaction() as session:
        result = await sessions.refresh(session, rt.settings, body.refreshToken)
    if isinstance(result, sessions.Refusal):
        raise result.error  # after the session's end is committed
    return Reply(TokenPair.of(result), headers=NO_STORE)


@routes.route(
    "POST",
    "/api/auth/logout",
    summary="End a session: give its refresh token, or send its access token as Authorization: Bearer",
    tags=["Auth"],
    body=LogoutBody,
    body_optional=True,
    response=LoggedOut,
    errors={401: "No credential, an unknown refresh token, or an invalid or expired access token"},
)
async def logout(request: web.Request, body: LogoutBody) -> Answer:
    rt = runtime(request)
    token = bearer_token(request)
    person = await person_of(request, token) if token and not body.refreshToken else None
    async with rt.db.transaction() as session:
        ended = await sessions.logout(session, refresh_token=body.refreshToken, person=person)
    return LoggedOut.of(ended)
