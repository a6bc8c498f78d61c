"""The review desk in a real headless Chromium (Debian's chromium driven by playwright): a reviewer signs
in with a staff key, opens an escalation, answers it and approves its objected proposal, and sees the
flash; a curator accepts a deferred observation; signing out ends the session (the old cookie no longer
works); the keyboard reaches the sign-in input and button. Screenshots go to a temporary directory (and
/tmp/concord-shots/ when it exists, for a person to look at)."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from tests.pages.support import deferred_submission, objected_escalation, section_escalation, staff_key

SHOTS = Path(tempfile.mkdtemp(prefix="concord-pages-"))
KEEP = Path("/tmp/concord-shots")
KEEP_SHOTS = KEEP.is_dir() and os.access(KEEP, os.W_OK)


async def shot(page: Any, name: str, *, full_page: bool = True) -> None:
    path = SHOTS / f"{name}.png"
    await page.screenshot(path=str(path), full_page=full_page)
    if KEEP_SHOTS:
        shutil.copy(path, KEEP / path.name)


async def sign_in(page: Any, base: str, key: str) -> None:
    await page.goto(f"{base}/review/")
    await page.get_by_label("Staff key", exact=True).fill(key)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(f"{base}/review/")


async def test_a_reviewer_answers_an_escalation_and_approves_its_proposal(
    browser, live_hub, docs, team, runtime
):
    page, base = browser, str(live_hub.make_url("")).rstrip("/")
    esc, _pid = await objected_escalation(docs, team)
    await sign_in(page, base, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    assert await page.get_by_role("status").inner_text() == "Signed in as Rey Reviewer."
    await shot(page, "reviewer-queue")

    await page.get_by_role("link", name="Can we cut the budget like this?").click()
    await page.wait_for_url(f"{base}/review/escalations/{esc}")
    assert "Less money, spent <carefully> & audited." in await page.locator("#main").inner_text()
    await page.get_by_label("Answer", exact=True).fill("Yes: the grant allows it.")
    await page.get_by_label("Approve (merge) it").check()
    await shot(page, "reviewer-escalation")
    await page.get_by_role("button", name="Send the answer").click()
    await page.wait_for_url(f"{base}/review/")
    assert (
        await page.get_by_role("status").inner_text()
        == "Answer sent to “Can we cut the budget like this?”; the proposal was approved."
    )
    assert "No escalations waiting." in await page.locator("#main").inner_text()
    await shot(page, "reviewer-after-answer")


async def test_a_curator_accepts_a_deferred_observation(
    browser, live_hub, hub, market, register, shop, fast, runtime
):
    page, base = browser, str(live_hub.make_url("")).rstrip("/")
    sub = await deferred_submission(hub, register, shop, "ok-browser")
    await sign_in(page, base, await staff_key(runtime, "Cora Curator", ("curator",)))
    assert "Open escalations" not in await page.locator("#main").inner_text()
    await page.get_by_role("link", name="Acme Interior Wall Paint 4L").click()
    await page.wait_for_url(f"{base}/review/work/{sub['submissionId']}")
    assert await page.get_by_role("link", name=f"http://127.0.0.1:{shop.port}/p/ok-browser").count() >= 1
    await page.get_by_label("Note (optional)").fill("Checked the shelf price.")
    await shot(page, "curator-submission")
    await page.get_by_role("button", name="Accept the observation").click()
    await page.wait_for_url(f"{base}/review/")
    assert (
        await page.get_by_role("status").inner_text()
        == "Observation “Acme Interior Wall Paint 4L” accepted: credits paid."
    )
    await shot(page, "curator-after-accept")


async def test_sign_out_ends_the_session_and_the_old_cookie_no_longer_works(browser, live_hub, runtime):
    page, base = browser, str(live_hub.make_url("")).rstrip("/")
    await sign_in(page, base, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    cookies = await page.context.cookies()
    session = next(c for c in cookies if c["name"] == "concord_review")
    assert session["httpOnly"] is True
    assert session["sameSite"] == "Strict"
    assert session["path"] == "/review"
    assert session["expires"] > 0
    await page.get_by_role("button", name="Sign out").click()
    await page.wait_for_url(f"{base}/review/")
    assert await page.get_by_role("status").inner_text() == "Signed out."
    await page.context.add_cookies([{**session}])  # the old cookie, put back
    await page.goto(f"{base}/review/")
    assert await page.get_by_role("heading", level=1).inner_text() == "Sign in to the review desk"
    assert "signed out" in await page.get_by_role("alert").inner_text()
    await shot(page, "signed-out")


async def test_the_keyboard_reaches_the_sign_in_input_and_button(browser, live_hub):
    page, base = browser, str(live_hub.make_url("")).rstrip("/")
    await page.goto(f"{base}/review/")
    await page.get_by_role("heading", level=1).click()  # the keyboard starts from the top of the content
    reached = []
    for _ in range(8):
        await page.keyboard.press("Tab")
        reached.append(await page.evaluate("document.activeElement.id || document.activeElement.textContent"))
        if reached[-1] == "key":  # the focus is visible: an outline drawn around the input
            assert await page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
        if "Sign in" in reached[-1]:
            break
    assert reached == ["key", "Sign in"]
    await shot(page, "sign-in-focus")


async def test_the_home_page_and_the_reference_render(browser, live_hub):
    page, base = browser, str(live_hub.make_url("")).rstrip("/")
    await page.goto(f"{base}/")
    await page.get_by_role("link", name="API reference").first.click()
    await page.wait_for_url(f"{base}/docs")
    assert (
        await page.get_by_role("heading", level=1).inner_text()
        == "Concord knowledge graph hub: API reference"
    )
    await shot(page, "reference", full_page=False)  # the whole reference is very long


async def test_an_escalation_about_a_section_shows_what_is_proposed_there_at_both_widths(
    browser, live_hub, hub, register, runtime
):
    """The proposals open on the section an escalation names are on its page, with their comparison and
    the objection's reason, at a desk's width and a phone's (nothing scrolls sideways)."""
    from tests.pages.test_share_browser import wider_than_viewport  # it imports `shot` from here

    page, base = browser, str(live_hub.make_url("")).rstrip("/")
    esc, _ids = await section_escalation(hub, register)
    await sign_in(page, base, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    for width, height in ((1280, 800), (390, 844)):
        await page.set_viewport_size({"width": width, "height": height})
        await page.goto(f"{base}/review/escalations/{esc}")
        opened = page.get_by_role("region", name="Proposed on this section, not decided yet")
        assert await opened.get_by_role("article").count() == 2
        first = opened.get_by_role("article").first
        assert "Shorten it" in await first.get_by_role("heading", level=3).inner_text()
        assert "The answer, <short> & sweet." in await first.inner_text()
        objections = first.get_by_role("region", name="Objections")
        assert "drops the <caveat> we agreed" in await objections.inner_text()
        assert await wider_than_viewport(page) <= 0
        await shot(page, f"reviewer-section-escalation-{width}")


async def test_a_reviewer_follows_an_open_proposal_and_decides_it_at_both_widths(
    browser, live_hub, hub, register, runtime
):
    """From the escalation about a section, a person follows a pending proposal's link, reads that her
    decision overrides the agents' votes, and rejects it with a note (phone width), then approves the other
    one (desk width); the flash names each."""
    from tests.pages.test_share_browser import wider_than_viewport  # it imports `shot` from here

    page, base = browser, str(live_hub.make_url("")).rstrip("/")
    esc, ids = await section_escalation(hub, register)
    await sign_in(page, base, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    for (width, height), name, decision, flash in (
        ((390, 844), "short", "Reject", "“Shorten it” rejected."),
        ((1280, 800), "longer", "Approve (merge the proposed text)", "“Add it” approved."),
    ):
        await page.set_viewport_size({"width": width, "height": height})
        await page.goto(f"{base}/review/escalations/{esc}")
        await page.get_by_role("link", name="Decide this pending proposal").first.click()
        await page.wait_for_url(f"{base}/review/proposals/{ids[name]}")
        form = page.get_by_role("form", name="Your decision")
        assert "your decision overrides their votes" in await form.inner_text()
        await form.get_by_label(decision).check()
        await form.get_by_label("Note").fill(f"Decided at {width} wide.")
        assert await wider_than_viewport(page) <= 0
        await shot(page, f"reviewer-pending-proposal-{width}")
        await form.get_by_role("button", name="Record the decision").click()
        await page.wait_for_url(f"{base}/review/")
        assert await page.get_by_role("status").inner_text() == f"Proposal {flash}"
    await page.goto(f"{base}/review/escalations/{esc}")
    assert await page.get_by_role("region", name="Proposed on this section, not decided yet").count() == 0
    assert "The first answer, with its caveat." in await page.locator("#main").inner_text()


async def test_a_topics_page_at_both_widths_leads_to_a_decision(browser, live_hub, hub, register, runtime):
    """From the desk's list of where proposals are open, a person opens a topic's page, reads the summary and
    the open proposals at a desk's width and a phone's (nothing scrolls sideways), switches the topic to
    human-only with its form, and follows a proposal to its decision form."""
    from tests.pages.test_share_browser import wider_than_viewport  # it imports `shot` from here

    page, base = browser, str(live_hub.make_url("")).rstrip("/")
    _esc, ids = await section_escalation(hub, register)
    await sign_in(page, base, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    for width, height in ((390, 844), (1280, 800)):  # the list of where proposals are open, from the nav
        await page.set_viewport_size({"width": width, "height": height})
        nav = page.get_by_role("navigation", name="Review desk")
        await nav.get_by_role("link", name="Open proposals").click()
        await page.wait_for_url(f"{base}/review/open")
        assert "1 topic or document with open proposals." in await page.locator("#main").inner_text()
        assert await wider_than_viewport(page) <= 0
        await shot(page, f"reviewer-open-{width}")
    await page.get_by_role("link", name=re.compile(r"^Topic [0-9a-f]{8}$")).click()
    await page.wait_for_url(re.compile(r".*/review/topics/[0-9a-f-]{36}$"))
    for width, height in ((1280, 800), (390, 844)):
        await page.set_viewport_size({"width": width, "height": height})
        glance = page.get_by_role("region", name="At a glance")
        assert "3 proposals open" in await glance.inner_text()
        assert "competing proposals" in await glance.inner_text()
        opened = page.get_by_role("region", name="Open proposals")
        assert await opened.get_by_role("row").count() == 4  # the header and three proposals
        assert await wider_than_viewport(page) <= 0
        await shot(page, f"reviewer-topic-page-{width}")
    # The person takes the topic into people's hands from its page (a phone's width).
    topic_page = page.url
    policy = page.get_by_role("form", name="Approval policy")
    await policy.get_by_label("Policy").select_option("human-only")
    await policy.get_by_label("Note").fill("The agents disagree on the caveat.")
    await policy.get_by_role("button", name="Set the policy").click()
    await page.wait_for_url(topic_page)
    assert (await page.get_by_role("status").inner_text()).endswith("now follows human-only.")
    assert "human-only" in await page.locator("dl.facts").inner_text()
    await page.get_by_role("link", name="Add it").click()
    await page.wait_for_url(f"{base}/review/proposals/{ids['longer']}")
    assert await page.get_by_role("form", name="Your decision").count() == 1


async def test_a_reviewer_removes_an_agent_and_readmits_it_at_both_widths(
    browser, live_hub, hub, register, runtime
):
    """On a topic's page a person picks an agent in the removal form, says why and removes it; the removed
    agents' table shows who did it and why, and the readmission form lets it back; nothing scrolls sideways
    at a desk's width or a phone's."""
    from tests.consensus_helpers import open_topic
    from tests.pages.test_share_browser import wider_than_viewport

    page, base = browser, str(live_hub.make_url("")).rstrip("/")
    topic_id, (_alice, bob, _carol) = await open_topic(hub, register)
    await sign_in(page, base, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    await page.goto(f"{base}/review/topics/{topic_id}")
    remove = page.get_by_role("form", name="Remove an agent")
    await remove.get_by_label("Agent").select_option(bob["agentId"])
    await remove.get_by_label("Why").fill("It keeps citing a withdrawn paper.")
    await remove.get_by_role("button", name="Remove the agent").click()
    await page.wait_for_url(f"{base}/review/topics/{topic_id}")
    assert (await page.get_by_role("status").inner_text()).endswith("was removed from the topic.")
    agents = page.get_by_role("region", name="Agents")
    table = await agents.get_by_role("table").inner_text()
    assert bob["agentName"] in table
    assert "withdrawn paper" in table
    for width, height in ((1280, 800), (390, 844)):
        await page.set_viewport_size({"width": width, "height": height})
        assert await wider_than_viewport(page) <= 0
        await shot(page, f"reviewer-topic-agents-{width}")
    readmit = page.get_by_role("form", name="Readmit an agent")
    await readmit.get_by_label("Agent").select_option(bob["agentId"])
    await readmit.get_by_label("Why").fill("The paper was reinstated.")
    await readmit.get_by_role("button", name="Readmit the agent").click()
    await page.wait_for_url(f"{base}/review/topics/{topic_id}")
    assert (await page.get_by_role("status").inner_text()).endswith("may join the topic again.")
    assert "No agent has been removed" in await page.get_by_role("region", name="Agents").inner_text()
