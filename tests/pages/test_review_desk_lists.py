"""The review desk's lists over HTTP: escalations ordered by priority then age, the filters (kind,
priority, resource, status) and real paging, a bad filter value refused with a 400 page naming its field,
the history of answers and decisions, counts in the navigation, and sign-in returning only to desk paths."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.pages.support import csrf_of, objected_escalation, sign_in, staff_key
from tests.review.support import doc_escalate


def questions(page: str, section: str = "escalations") -> list[str]:
    """The linked questions (or summaries) of one list on a desk page, in order."""
    found = re.search(rf'<section aria-labelledby="{section}">(.*?)</section>', page, re.S)
    if found is None:
        return []
    return re.findall(r'<th[^>]*scope="row"[^>]*><a href="[^"]+">([^<]+)</a>', found.group(1))


async def escalate(docs: Any, team: dict[str, Any], question: str, priority: str = "medium") -> str:
    esc = await doc_escalate(docs, team["keys"][1], team["base"], question=question, priority=priority)
    return str(esc["escalationId"])


async def test_the_queue_puts_priority_first_then_age_and_filters_by_priority_kind_and_resource(
    hub, docs, team, runtime, register
):
    await escalate(docs, team, "Old and low?", "low")
    await escalate(docs, team, "Old and normal?")
    await escalate(docs, team, "New and high?", "high")
    agent = await register()
    topic = await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={"title": "Desk filters", "tier": "institutional", "content": "# Answer\n\nYes.\n"},
    )
    topic_id = (await topic.json())["id"]
    resp = await hub.post(
        f"/api/pact/{topic_id}/escalate",
        headers=agent["headers"],
        json={"question": "Newest and urgent?", "priority": "urgent"},
    )
    assert resp.status == 201, await resp.text()
    await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))

    page = await (await hub.get("/review/")).text()
    assert questions(page) == ["Newest and urgent?", "New and high?", "Old and normal?", "Old and low?"]
    assert 'class="priority priority-urgent">urgent</span>' in page
    assert 'Queue <span class="count">4</span>' in page  # four escalations wait (no proposal)

    high = await (await hub.get("/review/?priority=high")).text()
    assert questions(high) == ["New and high?"]
    assert "Objected document proposals" not in high  # proposals have no priority
    normal = await (await hub.get("/review/?priority=normal")).text()
    assert questions(normal) == ["Old and normal?"]  # the document API's medium is normal
    topics = await (await hub.get("/review/?resource=topic")).text()
    assert questions(topics) == ["Newest and urgent?"]
    documents = await (await hub.get("/review/?resource=document&kind=escalation")).text()
    assert questions(documents) == ["New and high?", "Old and normal?", "Old and low?"]
    assert questions(await (await hub.get("/review/?kind=question")).text()) == []
    only_proposals = await (await hub.get("/review/?kind=proposal")).text()
    assert "Open escalations" not in only_proposals
    assert "Objected document proposals" in only_proposals
    # the chosen filters stay selected in the form
    assert '<option value="high" selected>high</option>' in high


async def test_paging_reaches_every_item_and_keeps_the_filters(hub, docs, team, runtime):
    for i in range(27):
        await escalate(docs, team, f"Question {i:02d}?")
    await escalate(docs, team, "The urgent one?", "high")
    await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    first = await (await hub.get("/review/?resource=document")).text()
    listed = questions(first)
    assert len(listed) == 25
    assert listed[0] == "The urgent one?"
    assert "28 escalations waiting (1–25 shown)." in first
    assert "Page 1 of 2" in first
    nxt = re.search(r'<a href="([^"]+)" rel="next">Next page', first)
    assert nxt is not None
    href = nxt.group(1).replace("&amp;", "&")
    assert "resource=document" in href
    assert "page=2" in href
    second = await (await hub.get(href)).text()
    assert questions(second) == ["Question 24?", "Question 25?", "Question 26?"]
    assert "28 escalations waiting (26–28 shown)." in second
    assert "Page 2 of 2" in second
    assert 'rel="prev"' in second
    assert set(listed[1:] + questions(second)) == {f"Question {i:02d}?" for i in range(27)}
    beyond = await hub.get("/review/?page=9")
    assert beyond.status == 200
    assert "(none on this page)" in await beyond.text()


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("status=bogus", "status"),
        ("status=closed", "status"),
        ("kind=comment", "kind"),
        ("priority=critical", "priority"),
        ("resource=wiki", "resource"),
        ("page=0", "page"),
        ("page=abc", "page"),
        ("page=-1", "page"),
        ("proposals_page=1e3", "proposals_page"),
        ("work_page=100001", "work_page"),
    ],
)
async def test_a_bad_filter_value_is_a_400_page_naming_its_field(hub, runtime, query, field):
    await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    for path in ("/review/", "/review/history"):
        resp = await hub.get(f"{path}?{query}")
        assert resp.status == 400
        assert resp.content_type == "text/html"
        text = await resp.text()
        assert f"{field}: " in text
        assert "Filter refused" in text


async def test_the_history_shows_who_answered_and_decided_what(hub, docs, team, runtime):
    esc, pid = await objected_escalation(docs, team)
    other = await escalate(docs, team, "Is the intro fine?")
    csrf = await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    empty = await (await hub.get("/review/history")).text()
    assert "No escalations found." in empty
    resp = await hub.post(
        f"/review/escalations/{other}/answer", data={"csrf": csrf, "answer": "It is."}, allow_redirects=False
    )
    assert resp.status == 303
    resp = await hub.post(
        f"/review/proposals/{pid}/decide",
        data={"csrf": csrf, "decision": "reject", "note": "Keep the budget."},
        allow_redirects=False,
    )
    assert resp.status == 303
    flash_page = await (await hub.get("/review/")).text()
    assert f'Proposal <a href="/review/proposals/{pid}">“s”</a> rejected.' in flash_page

    history = await (await hub.get("/review/history")).text()
    assert questions(history) == ["Is the intro fine?"]
    assert "It is." in history
    assert "Rey Reviewer" in history
    assert questions(history, "proposals") == ["s"]
    assert "Keep the budget." in history
    assert ">rejected<" in history
    decided = await (await hub.get("/review/history?status=decided")).text()
    assert questions(decided) == []  # the answer decided nothing
    assert questions(decided, "proposals") == ["s"]
    everything = await (await hub.get("/review/history?status=all")).text()
    assert set(questions(everything)) == {"Is the intro fine?", "Can we cut the budget like this?"}
    assert f'href="/review/escalations/{esc}"' in everything


@pytest.mark.parametrize(
    ("asked", "landed"),
    [
        ("/review/escalations/abc?x=1", "/review/escalations/abc?x=1"),
        ("//evil.example/review/", "/review/"),
        ("https://evil.example/review/", "/review/"),
        ("/review/../admin", "/review/"),
        ("/review/\\evil", "/review/"),
        ("/docs", "/review/"),
        ("", "/review/"),
    ],
)
async def test_sign_in_returns_only_to_desk_paths(hub, runtime, asked, landed):
    form = await hub.get("/review/", params={"next": asked} if asked else None)
    page = await form.text()
    resp = await hub.post(
        "/review/sign-in",
        data={
            "key": await staff_key(runtime, "Rey Reviewer", ("reviewer",)),
            "csrf": csrf_of(page),
            "next": asked,
        },
        allow_redirects=False,
    )
    assert resp.status == 303
    assert resp.headers["Location"] == landed


async def test_a_signed_out_deep_link_carries_itself_into_the_sign_in_form(hub, docs, team):
    esc, _pid = await objected_escalation(docs, team)
    resp = await hub.get(f"/review/escalations/{esc}")
    assert resp.status == 401
    assert f'name="next" value="/review/escalations/{esc}"' in await resp.text()
    post = await hub.post(f"/review/escalations/{esc}/answer", data={"answer": "x"})
    assert post.status == 401
    assert f'name="next" value="/review/escalations/{esc}"' in await post.text()


async def test_the_proposal_page_marks_a_deleted_list_item_and_escapes_everything(hub, docs, team, runtime):
    (alice, bob, _carol), base = team["keys"], team["base"]
    resp = await docs.post(
        f"{base}/proposals",
        headers=alice["headers"],
        json={
            "sectionId": "sec:plan:budget",
            "content": "Money <b>now</b>.\n\n- rent\n",
            "summary": "<i>x</i>",
        },
    )
    pid = (await resp.json())["proposalId"]
    await docs.post(f"{base}/proposals/{pid}/object", headers=bob["headers"], json={"reason": "Why <now>?"})
    await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    page = await (await hub.get(f"/review/proposals/{pid}")).text()
    assert "<b>now</b>" not in page
    assert "<i>x</i>" not in page
    assert "&lt;i&gt;x&lt;/i&gt;" in page
    assert "Why &lt;now&gt;?" in page
    assert '<span class="tag">list item inserted</span><span class="text"><ins>- rent</ins>' in page
    assert "Money<ins> &lt;b&gt;now&lt;/b&gt;</ins>." in page  # the inserted words, within the changed line


async def test_a_curators_history_lists_the_work_they_decided(hub, market, register, shop, fast, runtime):
    from tests.pages.support import deferred_submission

    first = await deferred_submission(hub, register, shop, "ok-history")
    csrf = await sign_in(hub, await staff_key(runtime, "Cora Curator", ("curator",)))
    queue = await (await hub.get("/review/")).text()
    assert 'Queue <span class="count">1</span>' in queue
    assert "No submissions found." in await (await hub.get("/review/history")).text()
    resp = await hub.post(
        f"/review/work/{first['submissionId']}/reject",
        data={"csrf": csrf, "reject-note": "wrong pack size"},
        allow_redirects=False,
    )
    assert resp.status == 303
    history = await (await hub.get("/review/history")).text()
    assert f'href="/review/work/{first["submissionId"]}"' in history
    assert "wrong pack size" in history
    assert "Cora Curator" in history
    assert "Open escalations" not in history  # a curator sees only the curators' lists
    assert 'Queue <span class="count">0</span>' in history
