"""Steps of the OAuth tests: PKCE pairs, registering a client, the consent page driven over HTTP (its
hidden fields and CSRF token), and token requests, form-encoded."""

from __future__ import annotations

import base64
import hashlib
import html
import re
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.people.conftest import PASSWORD

REDIRECT = "http://127.0.0.1:9/callback"  # nothing listens there: the tests read the Location
HIDDEN = re.compile(r'<input type="hidden" name="([\w]+)" value="([^"]*)">')
TICKED = re.compile(
    r'<input type="checkbox" form="consent" id="[\w-]+" name="grant" value="([^"]*)" checked>'
)
OFFERED = re.compile(r'<input type="checkbox" form="consent" id="[\w-]+" name="grant" value="([^"]*)"')


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def hidden_fields(page: str) -> dict[str, Any]:
    """What the page's form posts as it stands: its hidden fields and the scopes ticked (`grant`, a list:
    both aiohttp and httpx encode it as one field per value)."""
    found: dict[str, Any] = {name: html.unescape(value) for name, value in HIDDEN.findall(page)}
    found["grant"] = [html.unescape(value) for value in TICKED.findall(page)]
    return found


def offered_scopes(page: str) -> list[str]:
    return [html.unescape(value) for value in OFFERED.findall(page)]


def query_of(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


async def register(docs: Any, **metadata: Any) -> dict[str, Any]:
    body = {
        "client_name": "Test Client",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        **metadata,
    }
    resp = await docs.post("/oauth/register", json=body)
    assert resp.status == 201, await resp.text()
    return dict(await resp.json())


def authorize_url(client: dict[str, Any], challenge: str, **params: str) -> str:
    query = {
        "response_type": "code",
        "client_id": client["client_id"],
        "redirect_uri": client["redirect_uris"][0],
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "state-123",
        **params,
    }
    return "/oauth/authorize?" + urlencode({k: v for k, v in query.items() if v is not None})


async def consent(
    docs: Any,
    client: dict[str, Any],
    challenge: str,
    *,
    email: str = "ada@example.org",
    password: str = PASSWORD,
    decision: str = "approve",
    grant: list[str] | None = None,
    **params: str,
) -> Any:
    """Open the consent page and post its form, with every scope ticked unless `grant` says which; the
    response (a 303 back to the client, or a page)."""
    page = await docs.get(authorize_url(client, challenge, **params), allow_redirects=False)
    assert page.status == 200, await page.text()
    fields = hidden_fields(await page.text())
    if grant is not None:
        fields["grant"] = grant
    form = {**fields, "email": email, "password": password, "decision": decision}
    return await docs.post("/oauth/authorize", data=form, allow_redirects=False)


async def code_for(docs: Any, client: dict[str, Any], challenge: str, **kwargs: Any) -> str:
    resp = await consent(docs, client, challenge, **kwargs)
    assert resp.status == 303, await resp.text()
    found = query_of(resp.headers["Location"])
    assert found["state"] == "state-123"
    return found["code"]


async def token(docs: Any, **form: str) -> Any:
    return await docs.post("/oauth/token", data=form)


async def exchange(docs: Any, client: dict[str, Any], code: str, verifier: str, **extra: str) -> Any:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": client["redirect_uris"][0],
        "client_id": client["client_id"],
        "code_verifier": verifier,
        **extra,
    }
    return await token(docs, **form)
