"""Fixtures of the review-desk page tests: the work and review suites' fixtures (a local retailer site and
market, a document with a team of agents), and a headless Chromium when one is installed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.pages.support import CHROMIUM, CHROMIUM_ARGS
from tests.review.fixtures import reviewer, team  # noqa: F401
from tests.work.fixtures import fast, hits, market, shop  # noqa: F401

SHOTS = "/tmp/concord-shots"


@pytest.fixture
async def live_hub(aiohttp_server: Any, runtime: Any) -> Any:
    """The hub app on a real loopback port, for a browser."""
    from web.app import create_hub_app

    return await aiohttp_server(create_hub_app(runtime))


@pytest.fixture
async def live_docs(aiohttp_server: Any, runtime: Any) -> Any:
    """The document API app on a real loopback port, for a browser."""
    from web.app import create_docs_app

    return await aiohttp_server(create_docs_app(runtime))


@pytest.fixture
async def chromium() -> AsyncIterator[Any]:
    """A headless Chromium browser, for tests that open contexts of their own (a time zone, no script)."""
    if CHROMIUM is None:
        pytest.skip("no chromium binary (apt-get install chromium): the browser tests need one")
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install -e '.[test]')")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            await browser.close()


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    """A headless Chromium page (Debian's chromium, driven by playwright; never a downloaded browser)."""
    if CHROMIUM is None:
        pytest.skip("no chromium binary (apt-get install chromium): the browser tests need one")
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install -e '.[test]')")
    async with async_playwright() as pw:
        chromium = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = await chromium.new_context(viewport={"width": 1200, "height": 900})
        try:
            yield await context.new_page()
        finally:
            await context.close()
            await chromium.close()
