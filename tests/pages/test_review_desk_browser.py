"""The review desk as a reviewer uses it, in a real headless Chromium at a laptop's 1280x800 and a phone's
390x844: the urgent item is first in the queue, the escalation's page shows the proposal's deleted table
row marked as deleted (and its citations, summary and author), the reviewer decides, and finds the decision
in the history; a deep link survives signing in; no desk page is wider than the phone's screen.
Screenshots go to a temporary directory (and /tmp/concord-shots/ when it exists)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.consensus_helpers import open_topic, propose
from tests.pages.support import deferred_submission, objected_escalation, staff_key
from tests.pages.test_review_browser import shot

TABLE = (
    "# Answer\n\nWhat the grant pays for.\n\n| Line | Cost |\n| --- | --- |\n"
    "| Rent | 1200 |\n| Staff | 5400 |\n\n# Discussion\n\nOpen points.\n"
)
SIZES = {"laptop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


async def urgent_topic_escalation(hub: Any, register: Any) -> tuple[str, str]:
    """A topic proposal that deletes a table row and changes a cost, escalated as urgent."""
    topic, agents = await open_topic(hub, register, content=TABLE)
    proposal = await propose(
        hub,
        topic,
        agents[1],
        newContent="What the grant pays for.\n\n| Line | Cost |\n| --- | --- |\n| Rent | 1300 |\n",
        summary="Drop the staff line",
        citations=["Grants Act 2020 s 4"],
    )
    resp = await hub.post(
        f"/api/pact/{topic}/escalate",
        headers=agents[2]["headers"],
        json={
            "question": "Can the staff line go?",
            "proposalId": proposal["proposalId"],
            "priority": "urgent",
        },
    )
    assert resp.status == 201, await resp.text()
    return str((await resp.json())["escalationId"]), topic


async def no_wider_than_the_screen(page: Any, width: int) -> None:
    scroll = await page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{page.url} is {scroll}px wide at a {width}px viewport"


async def sign_in_here(page: Any, key: str) -> None:
    await page.get_by_label("Staff key", exact=True).fill(key)
    await page.get_by_role("button", name="Sign in").click()


@pytest.mark.parametrize("size", ["laptop", "phone"])
async def test_a_reviewer_finds_the_urgent_item_sees_the_deleted_row_decides_and_finds_it_in_the_history(
    browser, live_hub, hub, docs, team, register, runtime, size
):
    page, base = browser, str(live_hub.make_url("")).rstrip("/")
    viewport = SIZES[size]
    await page.set_viewport_size(viewport)
    older, _pid = await objected_escalation(docs, team)  # medium priority, and older
    urgent, _topic = await urgent_topic_escalation(hub, register)

    await page.goto(f"{base}/review/")
    await sign_in_here(page, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    await page.wait_for_url(f"{base}/review/")
    nav = await page.get_by_role("navigation", name="Review desk").inner_text()
    assert "Queue 3" in nav  # two escalations and one objected proposal wait
    rows = page.locator("#escalations ~ .scroll tbody tr")
    assert await rows.count() == 2
    first = rows.nth(0)
    assert await first.get_by_role("link").inner_text() == "Can the staff line go?"
    assert "urgent" in await first.inner_text()
    assert await rows.nth(1).get_by_role("link").get_attribute("href") == f"/review/escalations/{older}"
    await no_wider_than_the_screen(page, viewport["width"])
    await shot(page, f"desk-queue-{size}")

    await first.get_by_role("link").click()
    await page.wait_for_url(f"{base}/review/escalations/{urgent}")
    deleted = page.locator("ol.diff li.deleted")
    assert await deleted.count() == 1
    assert await deleted.locator("del").inner_text() == "| Staff | 5400 |"
    assert "table row deleted" in await deleted.inner_text()
    changed = page.locator("ol.diff li.changed")
    assert await changed.locator("del").inner_text() == "1200"
    assert await changed.locator("ins").inner_text() == "1300"
    main = await page.locator("#main").inner_text()
    assert "Grants Act 2020 s 4" in main  # the citation
    assert "Drop the staff line" in main  # the summary
    assert "1 line deleted, 1 line changed." in main
    # the rendered Markdown shows the tables as tables; the raw Markdown is behind a toggle
    assert await page.locator(".md table").count() == 2
    assert not await page.get_by_text("Now, as Markdown").is_visible()
    await page.get_by_text("Show the raw Markdown").click()
    assert await page.get_by_text("Now, as Markdown").is_visible()
    await no_wider_than_the_screen(page, viewport["width"])
    await shot(page, f"desk-escalation-{size}")

    await page.get_by_label("Answer", exact=True).fill("Staff move to the other grant.")
    await page.get_by_label("Approve (merge) it").check()
    await page.get_by_role("button", name="Send the answer").click()
    await page.wait_for_url(f"{base}/review/")
    status = page.get_by_role("status")
    assert await status.inner_text() == "Answer sent to “Can the staff line go?”; the proposal was approved."
    assert await status.get_by_role("link").get_attribute("href") == f"/review/escalations/{urgent}"
    await shot(page, f"desk-after-decision-{size}")

    await page.get_by_role("link", name="History").click()
    await page.wait_for_url(f"{base}/review/history")
    row = page.locator("#escalations ~ .scroll tbody tr").nth(0)
    text = await row.inner_text()
    assert "Can the staff line go?" in text
    assert "approved the proposal" in text
    assert "Rey Reviewer" in text
    await no_wider_than_the_screen(page, viewport["width"])
    await shot(page, f"desk-history-{size}")


async def test_a_deep_link_survives_signing_in(browser, live_hub, docs, team, runtime):
    page, base = browser, str(live_hub.make_url("")).rstrip("/")
    esc, _pid = await objected_escalation(docs, team)
    await page.goto(f"{base}/review/escalations/{esc}")
    assert await page.get_by_role("heading", level=1).inner_text() == "Sign in to the review desk"
    await sign_in_here(page, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    await page.wait_for_url(f"{base}/review/escalations/{esc}")
    assert await page.get_by_role("status").inner_text() == "Signed in as Rey Reviewer."
    assert "Can we cut the budget like this?" in await page.locator("#main").inner_text()


async def test_no_desk_page_is_wider_than_a_phone(
    browser, live_hub, hub, docs, team, register, runtime, market, shop, fast
):
    page, base = browser, str(live_hub.make_url("")).rstrip("/")
    await page.set_viewport_size(SIZES["phone"])
    esc, pid = await objected_escalation(docs, team)
    sub = await deferred_submission(hub, register, shop, "ok-phone")
    await page.goto(f"{base}/review/")
    await no_wider_than_the_screen(page, 390)
    await sign_in_here(page, await staff_key(runtime, "Bo Both", ("curator,reviewer",)))
    await page.wait_for_url(f"{base}/review/")
    for path, name in (
        ("/review/", "queue"),
        ("/review/history?status=all", "history-all"),
        (f"/review/escalations/{esc}", "escalation"),
        (f"/review/proposals/{pid}", "proposal"),
        (f"/review/work/{sub['submissionId']}", "work"),
        ("/review/?status=bogus", "bad-filter"),
    ):
        await page.goto(f"{base}{path}")
        await no_wider_than_the_screen(page, 390)
        await shot(page, f"desk-phone-{name}")
