"""The review desk's browser session: the session cookie (HttpOnly, SameSite=Strict, Path=/review, as long
as the server-side session lasts), the per-session form token every form carries (CSRF, compared in
constant time), the sign-in form's own token (a cookie the form must repeat, as no session exists yet),
and one-time flash messages."""

from __future__ import annotations

import base64
import hmac
import secrets
from datetime import timedelta

from aiohttp import web

from domain.kernel.errors import Unauthorized
from domain.people import staff_sessions as sessions
from web.kernel.request import runtime

PATH = "/review"
SESSION_COOKIE = "concord_review"
SIGN_IN_COOKIE = "concord_review_signin"
FLASH_COOKIE = "concord_review_flash"
CSRF_FIELD = "csrf"
SIGN_IN_FORM_SECONDS = 3600


def ttl(request: web.Request) -> timedelta:
    return timedelta(hours=runtime(request).settings.review_session_hours)


def _secure(request: web.Request) -> bool:
    """Cookies are marked Secure when the request came over TLS or the hub's public URL is https."""
    public = runtime(request).settings.public_url or ""
    return request.secure or public.lower().startswith("https://")


def set_cookie(
    request: web.Request, response: web.StreamResponse, name: str, value: str, max_age: int
) -> None:
    response.set_cookie(
        name, value, path=PATH, max_age=max_age, httponly=True, samesite="Strict", secure=_secure(request)
    )


def clear_cookie(request: web.Request, response: web.StreamResponse, name: str) -> None:
    response.del_cookie(name, path=PATH, httponly=True, samesite="Strict", secure=_secure(request))


async def current(request: web.Request) -> tuple[sessions.SignedIn | None, str | None]:
    """The live session the browser holds, or None and why not (None when it presented no cookie)."""
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        return None, None
    try:
        async with runtime(request).db.read() as session:
            return await sessions.resume(session, token), None
    except Unauthorized as exc:
        return None, exc.detail


def same_token(given: str | None, expected: str | None) -> bool:
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


def new_sign_in_token() -> str:
    return secrets.token_urlsafe(32)


def set_flash(request: web.Request, response: web.StreamResponse, message: str) -> None:
    encoded = base64.urlsafe_b64encode(message.encode()[:1000]).decode().rstrip("=")
    set_cookie(request, response, FLASH_COOKIE, encoded, 120)


def take_flash(request: web.Request) -> str | None:
    """The flash message the browser carries, if any (the caller clears the cookie)."""
    raw = request.cookies.get(FLASH_COOKIE)
    if not raw:
        return None
    try:
        return base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode("utf-8", "replace")
    except (ValueError, TypeError):
        return None
