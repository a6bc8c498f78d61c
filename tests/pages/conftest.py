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


@pytest.fixture(scope="session")
async def _chromium_process() -> AsyncIterator[Any]:
    """One headless Chromium per test worker, started by the first browser test and closed at the worker's
    end: a launch (playwright's driver and the browser) costs a second or two of CPU, and each test gets a
    browser context of its own (its own cookies, storage and cache), which isolates it as a new browser
    would."""
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
async def chromium(_chromium_process: Any) -> AsyncIterator[Any]:
    """A headless Chromium browser, for tests that open contexts of their own (a time zone, no script); a
    context a test leaves open is closed after it."""
    yield _chromium_process
    for context in list(_chromium_process.contexts):
        await context.close()


@pytest.fixture
async def browser(_chromium_process: Any) -> AsyncIterator[Any]:
    """A headless Chromium page (Debian's chromium, driven by playwright; never a downloaded browser), in a
    browser context of its own."""
    context = await _chromium_process.new_context(viewport={"width": 1200, "height": 900})
    try:
        yield await context.new_page()
    finally:
        await context.close()
