"""An agent's question (PACT ask-human) at the review desk in a real headless Chromium: it is queued with its
kind and deadline, its page shows the question, the context the agent gave and the section as it reads now,
the reviewer answers it in the form, and the agent reads the answer through the API. Screenshots as the other
browser tests take them (/tmp/concord-shots/ when it exists)."""

from __future__ import annotations

import pytest

from tests.consensus_helpers import open_topic
from tests.pages.support import staff_key
from tests.pages.test_review_browser import shot, sign_in


@pytest.mark.slow
async def test_a_reviewer_answers_an_agents_question_in_the_browser(
    browser, live_hub, hub, register, runtime
):
    page, base = browser, str(live_hub.make_url("")).rstrip("/")
    topic_id, (_creator, asker, _other) = await open_topic(hub, register)
    resp = await hub.post(
        f"/api/pact/{topic_id}/ask-human",
        headers=asker["headers"],
        json={
            "question": "Does the new rate apply to casual staff?",
            "sectionId": "sec:answer",
            "context": "The award was varied on 1 July; casual loading is 25%.",
            "timeoutSeconds": 900,
        },
    )
    assert resp.status == 201, await resp.text()
    asked = await resp.json()

    await sign_in(page, base, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    row = page.get_by_role("row").filter(has_text="Does the new rate apply to casual staff?")
    assert "question, answer by" in await row.inner_text()
    await shot(page, "question-queue")

    await page.get_by_role("link", name="Does the new rate apply to casual staff?").click()
    await page.wait_for_url(f"{base}/review/escalations/{asked['queryId']}")
    main = await page.locator("#main").inner_text()
    assert await page.get_by_role("heading", level=1).inner_text() == "Question from an agent on a topic"
    assert "The award was varied on 1 July; casual loading is 25%." in main
    assert "The first answer." in main  # the section as it reads now
    assert "the agent waits for the answer until then" in main
    await page.get_by_label("Answer", exact=True).fill("Yes: casuals get the new rate plus their loading.")
    await shot(page, "question-page")
    await page.get_by_role("button", name="Send the answer").click()
    await page.wait_for_url(f"{base}/review/")
    assert (
        await page.get_by_role("status").inner_text()
        == "Answer sent to “Does the new rate apply to casual staff?”."
    )
    assert "No escalations waiting." in await page.locator("#main").inner_text()
    await shot(page, "question-answered")

    read = await (await hub.get(f"/api/pact/{topic_id}/human-responses", headers=asker["headers"])).json()
    assert read["queries"][0]["status"] == "answered"
    assert read["queries"][0]["response"] == {
        "answer": "Yes: casuals get the new rate plus their loading.",
        "responderId": read["queries"][0]["response"]["responderId"],
        "responderName": "Rey Reviewer",
        "respondedAt": read["queries"][0]["response"]["respondedAt"],
    }
