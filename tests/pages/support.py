"""Steps of the review-desk page tests: a staff key's secret, signing in over HTTP, the form token of a
page, a document escalation that names an objected proposal, a deferred work submission."""

from __future__ import annotations

import os
import re
import shutil
from typing import Any

from tests.axiom_helpers import staff_headers
from tests.consensus_helpers import open_topic, propose, vote
from tests.review.support import doc_escalate, doc_object, doc_propose
from tests.work.support import claim, observation, submit

_CANDIDATES = (shutil.which("chromium"), "/usr/bin/chromium", shutil.which("chromium-browser"))
CHROMIUM = next((path for path in _CANDIDATES if path and os.path.exists(path)), None)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
FAR = {"priceCents": 9000, "unitPriceCents": 2250}  # 50% above the median: the validator defers it


async def staff_key(runtime: Any, name: str, roles: tuple[str, ...]) -> str:
    headers = await staff_headers(runtime, name, roles=roles)
    return headers["Authorization"].removeprefix("Bearer ")


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no form token on the page"
    return found.group(1)


async def sign_in(hub: Any, key: str) -> str:
    """Sign in through the form (the client keeps the cookies); the session's form token."""
    form = await hub.get("/review/")
    assert form.status == 200
    resp = await hub.post(
        "/review/sign-in", data={"key": key, "csrf": csrf_of(await form.text())}, allow_redirects=False
    )
    assert resp.status == 303, await resp.text()
    queue = await hub.get("/review/")
    assert queue.status == 200
    return csrf_of(await queue.text())


async def objected_escalation(docs: Any, team: dict[str, Any]) -> tuple[str, str]:
    """An agent proposes new budget text, another objects and escalates it: (escalation id, proposal id)."""
    (alice, bob, _carol), base = team["keys"], team["base"]
    pid = await doc_propose(docs, alice, base, text="Less money, spent <carefully> & audited.")
    await doc_object(docs, bob, base, pid, reason="breaks the grant's terms")
    esc = await doc_escalate(docs, bob, base, question="Can we cut the budget like this?", proposalId=pid)
    return str(esc["escalationId"]), pid


async def deferred_submission(hub: Any, register: Any, shop: Any, page: str = "ok-curated") -> dict[str, Any]:
    agent = await register()
    assignment = await claim(hub, agent)
    result = await (await submit(hub, agent, assignment["id"], observation(shop, page, **FAR))).json()
    assert result["status"] == "deferred", result
    return dict(result)


async def section_escalation(hub: Any, register: Any) -> tuple[str, dict[str, str]]:
    """A topic where two proposals are open on sec:answer (one objected to, with a reason to escape), one on
    another section and one already rejected; then an agent escalates sec:answer naming no proposal:
    (escalation id, proposal ids by name)."""
    topic_id, (alice, bob, carol) = await open_topic(hub, register)
    short = await propose(
        hub, topic_id, alice, newContent="The answer, <short> & sweet.", summary="Shorten it"
    )
    await vote(hub, topic_id, short["id"], bob, "object", reason="drops the <caveat> we agreed")
    longer = await propose(
        hub, topic_id, carol, newContent="The first answer, with its caveat.", summary="Add it"
    )
    gone = await propose(hub, topic_id, bob, newContent="Nothing.", summary="Empty it")
    for voter in (alice, carol):
        await vote(hub, topic_id, gone["id"], voter, "reject")
    other = await propose(
        hub,
        topic_id,
        alice,
        sectionId="sec:discussion",
        newContent="Settled.",
        summary="Close the discussion",
    )
    resp = await hub.post(
        f"/api/pact/{topic_id}/escalate",
        headers=bob["headers"],
        json={"sectionId": "sec:answer", "message": "Which answer should stand?"},
    )
    assert resp.status in (200, 201), await resp.text()
    ids = {"short": short["id"], "longer": longer["id"], "gone": gone["id"], "other": other["id"]}
    return (await resp.json())["escalationId"], ids
