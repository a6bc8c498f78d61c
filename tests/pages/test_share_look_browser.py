"""The share page in a real headless Chromium, as an outside reviewer opens it at a laptop's 1280x800 and a
phone's 390x844: it has the desk's look (the one stylesheet the document API serves, no inline style), is
never wider than the phone's screen, and shows its dates in the reader's time zone (Australia/Sydney here),
or in UTC when the browser runs no script; the desk's dates do the same. Screenshots go to a temporary
directory (and /tmp/concord-shots/ when it exists)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.built_documents import docx_bytes
from tests.documents_support import upload_ready
from tests.pages.support import objected_escalation, staff_key
from tests.pages.test_review_browser import shot

SIZES = {"laptop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
SYDNEY = "Australia/Sydney"


async def share(docs: Any, owner: dict[str, Any], doc_id: str) -> str:
    resp = await docs.post(
        f"/api/documents/{doc_id}/share-link",
        headers=owner["headers"],
        json={"permission": "FullReview", "accessMode": "open"},
    )
    assert resp.status == 201, await resp.text()
    return f"/share/{(await resp.json())['token']}"


async def looks(page: Any) -> dict[str, Any]:
    """What the page's look rests on: its stylesheets, inline styles, and a few rules of the shared sheet."""
    return dict(
        await page.evaluate(
            """() => ({
              sheets: [...document.styleSheets].map(s => s.href && new URL(s.href).pathname),
              inline: document.querySelectorAll('style, [style]').length,
              ruleCount: [...document.styleSheets].reduce((n, s) => n + s.cssRules.length, 0),
              font: getComputedStyle(document.body).fontFamily,
              width: document.documentElement.scrollWidth,
            })"""
        )
    )


@pytest.mark.parametrize("size", ["laptop", "phone"])
async def test_the_share_page_has_the_desks_look_and_fits_a_phone(
    chromium, live_docs, docs, team, runtime, size
):
    base = str(live_docs.make_url("")).rstrip("/")
    await objected_escalation(docs, team)  # an objected proposal: the comparison is on the page
    pictured = await upload_ready(docs, team["keys"][0], docx_bytes(), "budget.docx")
    context = await chromium.new_context(viewport=SIZES[size])
    try:
        page = await context.new_page()
        for name, path in (
            ("proposal", await share(docs, team["keys"][0], team["doc"]["id"])),
            ("docx", await share(docs, team["keys"][0], pictured["id"])),
        ):
            resp = await page.goto(f"{base}{path}")
            assert resp.status == 200
            csp = resp.headers["content-security-policy"]
            assert "style-src 'self'" in csp
            assert "script-src 'self'" in csp
            assert "unsafe-inline" not in csp
            found = await looks(page)
            assert found["sheets"] == ["/assets/concord.css"]
            assert (found["inline"], found["ruleCount"] > 50) == (0, True)
            assert "system-ui" in found["font"]
            assert found["width"] <= SIZES[size]["width"], f"{path} is {found['width']}px wide"
            await shot(page, f"share-{name}-{size}")
            if name == "proposal":
                deleted = page.locator(".change del").first
                assert await deleted.count() == 1
                assert "line-through" in await deleted.evaluate("e => getComputedStyle(e).textDecorationLine")
            else:
                assert await page.locator("article.doc img").evaluate("i => i.naturalWidth") > 0
    finally:
        await context.close()


def _local(iso: str, zone: str) -> str:
    return datetime.fromisoformat(iso).astimezone(ZoneInfo(zone)).strftime("%H:%M")


async def _times(page: Any) -> list[tuple[str, str, str]]:
    return [
        (str(t["iso"]), str(t["text"]), str(t["title"]))
        for t in await page.evaluate(
            "() => [...document.querySelectorAll('time[datetime]')]"
            ".map(t => ({iso: t.getAttribute('datetime'), text: t.textContent, title: t.title}))"
        )
    ]


async def test_dates_read_in_the_readers_time_zone_and_in_utc_without_script(
    chromium, live_docs, live_hub, docs, team, runtime
):
    docs_base = str(live_docs.make_url("")).rstrip("/")
    hub_base = str(live_hub.make_url("")).rstrip("/")
    escalation_id, _pid = await objected_escalation(docs, team)
    path = await share(docs, team["keys"][0], team["doc"]["id"])
    key = await staff_key(runtime, "Rey Reviewer", ("reviewer",))

    async def dates(javascript: bool) -> list[list[tuple[str, str, str]]]:
        context = await chromium.new_context(
            viewport=SIZES["phone"], timezone_id=SYDNEY, java_script_enabled=javascript
        )
        try:
            page = await context.new_page()
            await page.goto(f"{docs_base}{path}")
            shared = await _times(page)
            await page.goto(f"{hub_base}/review/escalations/{escalation_id}")
            await page.get_by_label("Staff key", exact=True).fill(key)
            await page.get_by_role("button", name="Sign in").click()
            await page.wait_for_url(f"{hub_base}/review/escalations/{escalation_id}")
            desk = await _times(page)
            await shot(page, f"desk-dates-{'script' if javascript else 'no-script'}")
            return [shared, desk]
        finally:
            await context.close()

    for found in await dates(javascript=True):
        assert found, "no dates on the page"
        for iso, text, title in found:
            assert _local(iso, SYDNEY) in text, (iso, text)
            assert "UTC" not in text, text
            assert title.endswith(" UTC"), title
    for found in await dates(javascript=False):
        assert found
        for iso, text, _title in found:
            assert re.fullmatch(r"\d\d \w{3} \d{4} \d\d:\d\d UTC", text), text
            assert _local(iso, "UTC") in text
