"""A topic's and a document's page on the review desk (PACT §9.3: a summary, not every event), over HTTP: who
is active, every open proposal linked to the page where a person decides it, the sections where proposals
compete, what merged in the last hour, the escalations waiting and when a person last acted; reached from
the escalation and proposal pages; refused as pages for the wrong role, an unknown or malformed id."""

from __future__ import annotations

import re

from tests.consensus_helpers import open_topic
from tests.pages.support import objected_escalation, section_escalation, sign_in, staff_key
from tests.pages.test_review_desk_lists import questions


def glance(page: str) -> list[str]:
    """The lines of the page's summary, tags stripped."""
    found = re.search(r'<ul class="glance">(.*?)</ul></section>', page, re.S)
    assert found, "no summary on the page"
    lines = re.findall(r"<li>(.*?)</li>\n", found.group(1), re.S)
    return [" ".join(re.sub(r"<[^>]+>", "", re.sub(r"<(ul|li)[^>]*>", " ", line)).split()) for line in lines]


async def test_a_topics_page_sums_up_what_is_open_and_each_open_proposal_leads_to_its_decision(
    hub, runtime, register
):
    esc, ids = await section_escalation(hub, register)
    csrf = await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    asked = await (await hub.get(f"/review/escalations/{esc}")).text()
    link = re.search(r'<a href="(/review/topics/([0-9a-f-]{36}))">Topic [0-9a-f]{8}</a>', asked)
    assert link, "the escalation's page links to its topic's page"
    path, topic_id = link.group(1), link.group(2)

    page = await hub.get(path)
    assert page.status == 200
    text = await page.text()
    assert re.search(r"<title>Topic “Topic [0-9a-f]{8}”", text)
    lines = glance(text)
    assert lines[0].startswith("3 agents active: ")
    assert lines[1:] == [
        "3 proposals open: each is yours to decide.",
        "1 section with competing proposals (only one can stand): sec:answer: 2 proposals from "
        + lines[2].split(" from ", 1)[1],
        "0 changes merged in the last hour.",
        "1 escalation waiting for a person.",
        "No person has acted here yet.",
    ]
    # Oldest first, each linked to its decision; a rejected one has nothing left to decide.
    assert questions(text, "open-proposals") == ["Shorten it", "Add it", "Close the discussion"]
    assert "Empty it" not in text
    for name in ("short", "longer", "other"):
        assert f'href="/review/proposals/{ids[name]}"' in text
    assert "0 approvals, 0 rejections, 1 objection" in text

    resp = await hub.post(
        f"/review/proposals/{ids['longer']}/decide",
        data={"csrf": csrf, "decision": "approve", "note": "The caveat stays."},
        allow_redirects=False,
    )
    assert resp.status == 303
    after = await (await hub.get(f"/review/topics/{topic_id}")).text()
    lines = glance(after)
    assert lines[1:5] == [
        "1 proposal open: each is yours to decide.",  # the rival on sec:answer was superseded
        "No section has competing proposals.",
        "1 change merged in the last hour.",
        "1 escalation waiting for a person.",
    ]
    assert lines[5].startswith("A person last acted here ")
    assert questions(after, "open-proposals") == ["Close the discussion"]
    # The proposal's own page links back to its topic.
    decided = await (await hub.get(f"/review/proposals/{ids['longer']}")).text()
    assert f'href="/review/topics/{topic_id}"' in decided


async def test_a_documents_page_counts_the_objected_proposal_and_escapes_what_agents_wrote(
    hub, docs, runtime, team
):
    esc, pid = await objected_escalation(docs, team)
    await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    doc_id = team["doc"]["id"]
    asked = await (await hub.get(f"/review/escalations/{esc}")).text()
    assert f'href="/review/documents/{doc_id}"' in asked
    text = await (await hub.get(f"/review/documents/{doc_id}")).text()
    lines = glance(text)
    assert lines[0] == "3 agents active: agent0, agent1, agent2."
    assert lines[1] == "1 proposal open (1 paused by an objection): each is yours to decide."
    assert lines[4] == "1 escalation waiting for a person."
    assert f'href="/review/proposals/{pid}"' in text
    assert "<carefully>" not in text  # what the agents wrote is escaped wherever it shows

    csrf = re.search(r'name="csrf" value="([^"]+)"', text)
    assert csrf
    resp = await hub.post(
        f"/review/proposals/{pid}/decide",
        data={"csrf": csrf.group(1), "decision": "reject", "note": "Keep the budget."},
        allow_redirects=False,
    )
    assert resp.status == 303
    after = glance(await (await hub.get(f"/review/documents/{doc_id}")).text())
    assert after[1] == "No proposal open: nothing is left to decide."


async def test_the_wrong_role_an_unknown_id_and_a_signed_out_visit_are_refused_as_pages(
    hub, docs, runtime, team
):
    doc_id = team["doc"]["id"]
    signed_out = await hub.get(f"/review/documents/{doc_id}")
    assert signed_out.status == 401
    assert f'name="next" value="/review/documents/{doc_id}"' in await signed_out.text()
    csrf = await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    for path in (
        "/review/topics/00000000-0000-4000-8000-000000000000",
        f"/review/topics/{doc_id}",  # a document's id is no topic
        "/review/documents/not-an-id",
        "/review/documents/%3Cscript%3E",
    ):
        resp = await hub.get(path)
        assert resp.status == 404, path
        assert resp.content_type == "text/html"
        assert "<script>" not in await resp.text()
    resp = await hub.post("/review/sign-out", data={"csrf": csrf}, allow_redirects=False)
    assert resp.status == 303
    await sign_in(hub, await staff_key(runtime, "Cora Curator", ("curator",)))
    refused = await hub.get(f"/review/documents/{doc_id}")
    assert refused.status == 403
    assert "This page is for staff with the reviewer role" in await refused.text()


async def test_the_open_page_lists_where_proposals_are_open_longest_waiting_first(
    hub, docs, runtime, team, register, monkeypatch
):
    _esc, _ids = await section_escalation(hub, register)  # a topic with three open proposals
    _esc2, pid = await objected_escalation(docs, team)  # a document with one, paused by an objection
    doc_id = team["doc"]["id"]
    await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    queue = await (await hub.get("/review/")).text()
    assert '<a href="/review/open">Open proposals</a>' in queue

    text = await (await hub.get("/review/open")).text()
    assert "2 topics or documents with open proposals." in text
    rows = re.findall(r'<th[^>]*scope="row"[^>]*><a href="(/review/(?:topic|document)s/[^"]+)">', text)
    assert rows[1] == f"/review/documents/{doc_id}"  # the topic's oldest proposal has waited longer
    assert rows[0].startswith("/review/topics/")
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", text)
    assert cells[:3] == ["topic", "3", "0"]
    assert cells[3:6] == ["document", "1", "1"]  # (the time cells hold markup)

    documents = await (await hub.get("/review/open?resource=document")).text()
    assert "1 document with open proposals." in documents
    assert f'href="/review/documents/{doc_id}"' in documents
    assert 'aria-current="page">Documents</a>' in documents
    assert "/review/topics/" not in documents

    # One to a page: the pager reaches the second, and keeps the filter.
    monkeypatch.setattr("web.hub.pages.review.PAGE_SIZE", 1)
    first = await (await hub.get("/review/open")).text()
    assert "Page 1 of 2" in first
    nxt = re.search(r'<a href="([^"]+)" rel="next">', first)
    assert nxt is not None
    second = await (await hub.get(nxt.group(1).replace("&amp;", "&"))).text()
    assert f'href="/review/documents/{doc_id}"' in second
    assert "Page 2 of 2" in second

    for query, field in (("resource=wiki", "resource"), ("page=0", "page"), ("page=x", "page")):
        resp = await hub.get(f"/review/open?{query}")
        assert resp.status == 400, query
        assert f"{field}: " in await resp.text()


async def test_the_open_page_is_for_reviewers(hub, runtime):
    await sign_in(hub, await staff_key(runtime, "Cora Curator", ("curator",)))
    queue = await (await hub.get("/review/")).text()
    assert "/review/open" not in queue
    assert (await hub.get("/review/open")).status == 403


async def test_a_reviewer_takes_a_topic_into_human_hands_from_its_page(hub, runtime, register):
    """PACT §9.2 on the desk: the topic's page shows its approval policy and a form to set it; human-only
    puts its pending proposals in the queue; a form without a note or with an unknown policy is refused as
    a page that keeps what was chosen; a document's page has no such form (its organisation sets it)."""
    esc, ids = await section_escalation(hub, register)
    csrf = await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    asked = await (await hub.get(f"/review/escalations/{esc}")).text()
    link = re.search(r'href="(/review/topics/[0-9a-f-]{36})"', asked)
    assert link
    path = link.group(1)
    page = await (await hub.get(path)).text()
    assert "<dt>Approval policy</dt><dd>concord-default</dd>" in page
    assert f'action="{path}/approval-policy"' in page
    assert '<option value="concord-default" selected>' in page

    no_note = await hub.post(f"{path}/approval-policy", data={"csrf": csrf, "approvalPolicy": "human-only"})
    assert no_note.status == 400
    text = await no_note.text()
    assert "write a note saying why" in text
    assert '<option value="human-only" selected>' in text  # what was chosen stays chosen
    bogus = await hub.post(
        f"{path}/approval-policy", data={"csrf": csrf, "approvalPolicy": "anarchy", "note": "x"}
    )
    assert bogus.status == 400
    assert (await hub.post(f"{path}/approval-policy", data={"approvalPolicy": "human-only"})).status == 403

    resp = await hub.post(
        f"{path}/approval-policy",
        data={"csrf": csrf, "approvalPolicy": "human-only", "note": "The agents disagree."},
        allow_redirects=False,
    )
    assert resp.status == 303
    assert resp.headers["Location"] == path
    after = await (await hub.get(path)).text()
    flash = r'The topic <a href="/review/topics/[0-9a-f-]{36}">“Topic [0-9a-f]{8}”</a> now follows human-only'
    assert re.search(flash + r"\.", after)
    assert "<dt>Approval policy</dt><dd>human-only</dd>" in after
    # The three proposals still open each wait for a person now, beside the agent's question.
    queue = await (await hub.get("/review/?kind=escalation")).text()
    assert len(questions(queue)) == 4
    assert 'Queue <span class="count">4</span>' in queue
    again = await hub.post(
        f"{path}/approval-policy",
        data={"csrf": csrf, "approvalPolicy": "human-only", "note": "Still."},
        allow_redirects=False,
    )
    assert again.status == 303
    assert "already follows human-only: nothing changed." in await (await hub.get(path)).text()


async def test_a_documents_page_has_no_policy_form(hub, docs, runtime, team):
    await objected_escalation(docs, team)
    await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    page = await (await hub.get(f"/review/documents/{team['doc']['id']}")).text()
    assert "<dt>Approval policy</dt>" in page
    assert "/approval-policy" not in page


async def test_a_reviewer_removes_an_agent_from_a_topics_page_and_readmits_it(hub, runtime, register):
    """PACT §9.2 on the desk: the topic's page lists its active agents in a removal form; removing one takes
    it off the active list and into the removed ones with who, when and why, and it may not join again; the
    readmission form lets it back. A form without an agent or a note, or with an agent that never joined,
    is refused as the page again, keeping what was written."""
    topic_id, (_alice, bob, _carol) = await open_topic(hub, register)
    csrf = await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    path = f"/review/topics/{topic_id}"
    page = await (await hub.get(path)).text()
    assert f'action="{path}/agents/remove"' in page
    assert f'<option value="{bob["agentId"]}">{bob["agentName"]}</option>' in page
    assert "No agent has been removed from this topic." in page
    assert f'action="{path}/agents/readmit"' not in page

    no_note = await hub.post(f"{path}/agents/remove", data={"csrf": csrf, "agentId": bob["agentId"]})
    assert no_note.status == 400
    text = await no_note.text()
    assert "write a note saying why" in text
    assert f'<option value="{bob["agentId"]}" selected>' in text  # the choice stays
    no_agent = await hub.post(f"{path}/agents/remove", data={"csrf": csrf, "remove-note": "Why not."})
    assert no_agent.status == 400
    assert "choose an agent" in await no_agent.text()
    stranger = await register()
    unknown = await hub.post(
        f"{path}/agents/remove", data={"csrf": csrf, "agentId": stranger["agentId"], "remove-note": "x"}
    )
    assert unknown.status == 404
    assert "never joined this topic" in await unknown.text()
    forged = await hub.post(f"{path}/agents/remove", data={"agentId": bob["agentId"], "remove-note": "x"})
    assert forged.status == 403  # no CSRF token

    resp = await hub.post(
        f"{path}/agents/remove",
        data={"csrf": csrf, "agentId": bob["agentId"], "remove-note": "It <spams> the topic."},
        allow_redirects=False,
    )
    assert resp.status == 303
    assert resp.headers["Location"] == path
    after = await (await hub.get(path)).text()
    assert f"The agent “{bob['agentName']}” was removed from the topic." in after
    assert glance(after)[0].startswith("2 agents active: ")
    assert bob["agentName"] not in glance(after)[0]
    removed = re.search(r"<table.*?Removed by a reviewer.*?</table>", after, re.S)
    assert removed, "the removed agents' table"
    assert bob["agentName"] in removed.group(0)
    assert "Rey Reviewer" in removed.group(0)
    assert "It &lt;spams&gt; the topic." in removed.group(0)
    assert f'<option value="{bob["agentId"]}">' in after.split('action="' + path + '/agents/readmit"')[1]
    resp = await hub.post(f"/api/pact/{topic_id}/join", headers=bob["headers"])
    assert resp.status == 403

    resp = await hub.post(
        f"{path}/agents/readmit",
        data={"csrf": csrf, "agentId": bob["agentId"], "readmit-note": "It stopped."},
        allow_redirects=False,
    )
    assert resp.status == 303
    back = await (await hub.get(path)).text()
    assert f"The agent “{bob['agentName']}” may join the topic again." in back
    assert "No agent has been removed from this topic." in back
    resp = await hub.post(f"/api/pact/{topic_id}/join", headers=bob["headers"])
    assert resp.status == 200, await resp.text()


async def test_a_documents_page_has_no_agent_forms(hub, docs, runtime, team):
    await objected_escalation(docs, team)
    await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    page = await (await hub.get(f"/review/documents/{team['doc']['id']}")).text()
    assert "/agents/remove" not in page
    assert "/agents/readmit" not in page
