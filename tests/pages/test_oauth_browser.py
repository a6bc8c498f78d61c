"""The OAuth sign-in and consent page in a real headless Chromium (Debian's chromium driven by
playwright): a person opens the page an MCP client sent her to, sees the client's name, where it sends
her back and the scopes asked (a checkbox each, ticked), unticks one, signs in and allows, and lands on
the client's redirect URI with a code that the token endpoint takes for a token without the unticked
scope (a tool needing it is refused); a wrong password shows the page again saying so, her choice kept;
denying, or unticking every scope, sends error=access_denied. Screenshots go to /tmp/oauth-shots/ when
that directory exists."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import httpx2
import pytest
from aiohttp import web
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.people.oauth_support import pkce, query_of

SHOTS = Path(tempfile.mkdtemp(prefix="concord-oauth-"))
KEEP = Path("/tmp/oauth-shots")
KEEP_SHOTS = KEEP.is_dir() and os.access(KEEP, os.W_OK)
PASSWORD = "correct horse battery"


async def shot(page: Any, name: str) -> None:
    path = SHOTS / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    if KEEP_SHOTS:
        shutil.copy(path, KEEP / path.name)


@pytest.fixture
async def live_docs(aiohttp_server: Any, runtime: Any) -> Any:
    from web.app import create_docs_app

    return await aiohttp_server(create_docs_app(runtime))


@pytest.fixture
async def landing(aiohttp_server: Any) -> Any:
    """The MCP client's local redirect URI: a loopback page saying the sign-in is done."""

    async def callback(request: web.Request) -> web.Response:
        return web.Response(
            text="<h1>Concord connected</h1><p>You can close this window.</p>", content_type="text/html"
        )

    app = web.Application()
    app.router.add_get("/callback", callback)
    return await aiohttp_server(app)


async def _person(runtime: Any, scopes: str = "documents:read,tap:read,tap:write") -> None:
    from domain.kernel.context import SYSTEM
    from domain.people import users

    async with runtime.db.transaction() as session:
        await users.create(
            session, SYSTEM, org_name="Acme", email="ada@example.org", password=PASSWORD, scopes=scopes
        )


async def _flow(base: str, redirect: str) -> tuple[dict[str, Any], str, str]:
    """A registered client, its PKCE verifier and the authorization URL it would open."""
    async with httpx.AsyncClient() as http:
        registered = await http.post(
            f"{base}/oauth/register",
            json={
                "client_name": "Claude Desktop",
                "redirect_uris": [redirect],
                "token_endpoint_auth_method": "none",
            },
        )
    assert registered.status_code == 201, registered.text
    client = registered.json()
    verifier, challenge = pkce()
    query = {
        "response_type": "code",
        "client_id": client["client_id"],
        "redirect_uri": redirect,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "s-42",
        "scope": "documents:read tap:read tap:write",
        "resource": f"{base}/mcp",
    }
    return client, verifier, f"{base}/oauth/authorize?{urlencode(query)}"


async def test_a_person_signs_in_and_allows_an_mcp_client(browser, live_docs, landing, runtime):
    page, base = browser, str(live_docs.make_url("")).rstrip("/")
    redirect = str(landing.make_url("/callback"))
    await _person(runtime)
    client, verifier, url = await _flow(base, redirect)

    await page.goto(url)
    assert (
        await page.get_by_role("heading", level=1).inner_text()
        == "Allow Claude Desktop to use Concord for you?"
    )
    main = await page.locator("#main").inner_text()
    assert redirect.split("/")[2] in main  # the host it sends the person back to
    assert "tap:write" in main
    boxes = page.get_by_role("checkbox")
    assert await boxes.count() == 3
    for n in range(3):
        assert await boxes.nth(n).is_checked()
    await shot(page, "oauth-consent")

    await page.get_by_label("tap:write").uncheck()
    await shot(page, "oauth-consent-unticked")
    await page.get_by_label("Email", exact=True).fill("ada@example.org")
    await page.get_by_label("Password", exact=True).fill("not the password")
    await page.get_by_role("button", name="Sign in and allow").click()
    assert await page.get_by_role("alert").inner_text() == "Wrong email or password"
    assert await page.get_by_label("Email", exact=True).input_value() == "ada@example.org"
    assert not await page.get_by_label("tap:write").is_checked()  # her choice is kept
    assert await page.get_by_label("tap:read").is_checked()
    await shot(page, "oauth-consent-wrong-password")

    await page.get_by_label("Password", exact=True).fill(PASSWORD)
    await page.get_by_role("button", name="Sign in and allow").click()
    await page.wait_for_url(lambda url: url.startswith(f"{redirect}?"))
    back = query_of(page.url)
    assert back["state"] == "s-42"
    assert back["iss"] == base
    assert "Concord connected" in await page.locator("h1").inner_text()
    await shot(page, "oauth-landed")

    form = {
        "grant_type": "authorization_code",
        "code": back["code"],
        "redirect_uri": redirect,
        "client_id": client["client_id"],
        "code_verifier": verifier,
    }
    async with httpx.AsyncClient() as http:
        tokens = await http.post(f"{base}/oauth/token", data=form)
    assert tokens.status_code == 200, tokens.text
    assert tokens.json()["scope"] == "documents:read tap:read"  # tap:write was unticked
    headers = {"Authorization": f"Bearer {tokens.json()['access_token']}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http:
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as mcp:
            assert not (await mcp.call_tool("pact_list_documents", {})).is_error
            args = {"documentId": "doc-x", "sectionId": "sec:a", "content": "New.", "summary": "Try."}
            refused = await mcp.call_tool("pact_propose", args)  # needs tap:write
            assert refused.is_error
            assert "insufficient_scope" in refused.content[0].text  # type: ignore[union-attr]


async def test_denying_sends_access_denied_back(browser, live_docs, landing, runtime):
    page, base = browser, str(live_docs.make_url("")).rstrip("/")
    redirect = str(landing.make_url("/callback"))
    await _person(runtime)
    _, _, url = await _flow(base, redirect)
    await page.goto(url)
    await page.get_by_role("button", name="Deny").click()  # no credentials needed to say no
    await page.wait_for_url(lambda url: url.startswith(f"{redirect}?"))
    assert query_of(page.url)["error"] == "access_denied"

    # Allowing with every scope unticked is a no as well.
    await page.goto(url)
    for label in ("documents:read", "tap:read", "tap:write"):
        await page.get_by_label(label).uncheck()
    await page.get_by_label("Email", exact=True).fill("ada@example.org")
    await page.get_by_label("Password", exact=True).fill(PASSWORD)
    await page.get_by_role("button", name="Sign in and allow").click()
    await page.wait_for_url(lambda url: url.startswith(f"{redirect}?"))
    assert query_of(page.url)["error"] == "access_denied"

    # A link naming no registered client stops on a page of its own, never redirecting.
    await page.goto(url.replace("client_id=cid_", "client_id=cid_x"))
    assert await page.get_by_role("heading", level=1).inner_text() == "This sign-in cannot go on"
    assert "unknown client_id" in await page.get_by_role("alert").inner_text()
    await shot(page, "oauth-refused")
