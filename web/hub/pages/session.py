"""The review desk's browser session: the session cookie (HttpOnly, SameSite=Strict, Path=/review, as long
as the server-side session lasts), the per-session form token every form carries (CSRF, compared in
constant time), the sign-in form's own token (a cookie the form must repeat, as no session exists yet),
and one-time flash messages."""

from __future__ import annotations

import base64
import hmac
import json
import secrets
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

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


HOME = "/review/"


def safe_next(value: str | None) -> str:
    """Where to go after signing in: a path of the desk itself (`/review/...`, with its query), else the
    queue. Anything else (another site, `//host`, a scheme, a backslash, control characters, `..`) is
    refused for the queue, so the form cannot be used to send a person elsewhere."""
    if not value or len(value) > 2000 or not value.startswith(HOME):
        return HOME
    if "\\" in value or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        return HOME
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or ".." in parts.path.split("/"):
        return HOME
    return value


@dataclass(frozen=True)
class Flash:
    """A one-time message after an action; `label` links to `link` (a desk path) between `text` and
    `after`, to name the item the action was about."""

    text: str
    link: str | None = None
    label: str | None = None
    after: str = ""

    @property
    def plain(self) -> str:
        return f"{self.text}{self.label or ''}{self.after}"


def set_flash(request: web.Request, response: web.StreamResponse, message: str | Flash) -> None:
    flash = message if isinstance(message, Flash) else Flash(message)
    data = json.dumps(
        {"t": flash.text[:300], "l": flash.link, "n": (flash.label or "")[:200], "a": flash.after[:300]}
    )
    encoded = base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")
    set_cookie(request, response, FLASH_COOKIE, encoded, 120)


def take_flash(request: web.Request) -> Flash | None:
    """The flash message the browser carries, if any (the caller clears the cookie); a link that is not a
    desk path is dropped."""
    raw = request.cookies.get(FLASH_COOKIE)
    if not raw:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode("utf-8", "replace"))
    except (ValueError, TypeError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("t"), str):
        return None
    link = data.get("l")
    label = data.get("n")
    after = data.get("a")
    good_link = isinstance(link, str) and safe_next(link) == link and link != HOME
    return Flash(
        data["t"],
        link if good_link else None,
        label if isinstance(label, str) and label else None,
        after if isinstance(after, str) else "",
    )
