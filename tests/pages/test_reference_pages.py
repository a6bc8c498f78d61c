"""The API reference (Swagger UI from the swagger-ui-py package, served by each app itself), its
reference without script, the favicon, and every page but the review desk at a phone's width, in a real
headless Chromium at 1280x800 and 390x844."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.pages.support import deferred_submission, staff_key
from tests.pages.test_review_browser import shot, sign_in
from tests.pages.test_share_browser import wider_than_viewport


@pytest.fixture
async def live_docs(aiohttp_server: Any, runtime: Any) -> Any:
    from web.app import create_docs_app

    return await aiohttp_server(create_docs_app(runtime))


async def test_the_reference_is_served_from_the_app_itself(hub, docs):
    for client in (hub, docs):
        resp = await client.get("/docs")
        assert resp.status == 200
        page = await resp.text()
        csp = resp.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp
        assert "connect-src 'self'" in csp
        scripts = re.findall(r'<script src="([^"]+)"', page)
        assert scripts == [
            "/assets/concord.js",  # every page's: dates in the reader's time zone
            "/assets/swagger-ui/swagger-ui-bundle.js",
            "/assets/swagger-ui/start.js",
        ]
        assert "<script>" not in page  # no inline script
        assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing from elsewhere
        assert 'href="/docs/plain"' in page  # the way without script
        spec = await (await client.get("/openapi.json")).json()
        some = next(iter(spec["paths"]))
        assert f"<code>{some}</code>" in page  # the sidebar lists the operations
        for name, kind in (
            ("swagger-ui-bundle.js", "text/javascript"),
            ("swagger-ui.css", "text/css"),
            ("start.js", "text/javascript"),
        ):
            asset = await client.get(f"/assets/swagger-ui/{name}")
            assert asset.status == 200
            assert asset.content_type == kind
            assert len(await asset.read()) > 100
        for wrong in ("swagger-initializer.js", "..%2F__init__.py", "index.css"):
            assert (await client.get(f"/assets/swagger-ui/{wrong}")).status == 404
        plain = await client.get("/docs/plain")
        assert plain.status == 200
        assert "<script" not in await plain.text()
        icon = await client.get("/favicon.ico")
        assert icon.status == 200
        assert icon.content_type == "image/x-icon"
        data = await icon.read()
        assert data[:4] == b"\0\0\1\0"
        assert b"\x89PNG" in data
        for path in ("/", "/docs", "/docs/plain", "/favicon.ico"):
            assert (await client.head(path)).status == 200


@pytest.mark.slow
async def test_swagger_ui_renders_with_a_sidebar_and_every_page_fits_a_phone(browser, live_hub, live_docs):
    page = browser
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    for name, server in (("hub", live_hub), ("docs", live_docs)):
        base = str(server.make_url("")).rstrip("/")
        await page.set_viewport_size({"width": 1280, "height": 800})
        await page.goto(f"{base}/docs")
        await page.locator(".swagger-ui .opblock").first.wait_for()
        assert await page.locator(".swagger-ui .opblock").count() > 10
        assert await page.locator(".swagger-ui input.operation-filter-input").count() == 1  # search
        sidebar = page.get_by_role("navigation", name="Operations")
        link = sidebar.get_by_role("link").nth(1)
        await link.click()
        await page.locator(".swagger-ui .opblock.is-open").first.wait_for()  # the operation opened
        opened = page.locator(".swagger-ui .opblock.is-open").first
        assert await opened.locator(".opblock-section-header, .responses-wrapper").count() >= 1
        await shot(page, f"reference-{name}-1280", full_page=False)
        await page.set_viewport_size({"width": 390, "height": 844})
        for path in ("/", "/docs", "/docs/plain"):
            await page.goto(f"{base}{path}")
            if path == "/docs":
                await page.locator(".swagger-ui .opblock").first.wait_for()
            assert await wider_than_viewport(page) <= 0, f"{name} {path} scrolls sideways"
            await shot(page, f"phone-{name}{path.replace('/', '-')}", full_page=False)
    assert not [e for e in errors if "Content Security Policy" in e], errors


async def test_the_work_page_reads_as_prices_and_fits_a_phone(
    browser, live_hub, hub, market, register, shop, fast, runtime
):
    page, base = browser, str(live_hub.make_url("")).rstrip("/")
    sub = await deferred_submission(hub, register, shop, "ok-phone")
    await sign_in(page, base, await staff_key(runtime, "Cora Curator", ("curator",)))
    for width, height in ((1280, 800), (390, 844)):
        await page.set_viewport_size({"width": width, "height": height})
        await page.goto(f"{base}/review/work/{sub['submissionId']}")
        text = await page.locator("#main").inner_text()
        assert "AUD 90.00" in text  # the price with its currency
        assert "AUD 22.50 per L" in text
        assert "True" not in text
        assert re.search(r"In stock\s+inStock\s+yes", text)
        assert await wider_than_viewport(page) <= 0
        await shot(page, f"work-page-{width}")
