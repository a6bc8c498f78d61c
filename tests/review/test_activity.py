"""The review API beside the desk's topic and document pages (PACT §9.3, §9.2): one topic or document at a
glance (agents, open proposals with their addresses for a decision, competing sections, merges of the last
hour, escalations waiting, a person's last act) and the list of where proposals are open; refused clearly
for other roles, other keys, unknown ids and bad filters."""

from __future__ import annotations

from yarl import URL

from tests.axiom_helpers import staff_headers
from tests.pages.support import section_escalation

MISSING = "00000000-0000-4000-8000-000000000000"


async def test_a_topic_at_a_glance_before_and_after_a_person_steps_in(hub, register, runtime, reviewer):
    esc, ids = await section_escalation(hub, register)
    asked = await (await hub.get(f"/api/review/escalations/{esc}", headers=reviewer)).json()
    topic_id = asked["resourceId"]

    glance = await (await hub.get(f"/api/review/topics/{topic_id}", headers=reviewer)).json()
    assert (glance["resourceType"], glance["resourceId"], glance["resourceVersion"]) == ("topic", topic_id, 1)
    assert glance["resourceTitle"] == asked["resourceTitle"]
    assert glance["approvalPolicy"] == "concord-default"
    assert len(glance["agents"]) == 3
    assert [p["proposalId"] for p in glance["openProposals"]] == [ids["short"], ids["longer"], ids["other"]]
    short = glance["openProposals"][0]
    assert (short["status"], short["sectionId"], short["votes"]) == (
        "pending",
        "sec:answer",
        {"approve": 0, "reject": 0, "object": 1},
    )
    assert short["url"].endswith(f"/api/review/proposals/{ids['short']}")
    [contest] = glance["contestedSections"]
    assert (contest["sectionId"], contest["proposals"], len(contest["authors"])) == ("sec:answer", 2, 2)
    assert (glance["mergedLastHour"], glance["openEscalations"], glance["lastPersonAt"]) == (0, 1, None)

    resp = await hub.post(
        URL(short["url"]).path + "/decide",  # the address the answer gives
        headers=reviewer,
        json={"decision": "reject", "note": "It drops the caveat."},
    )
    assert resp.status == 200, await resp.text()
    after = await (await hub.get(f"/api/review/topics/{topic_id}", headers=reviewer)).json()
    assert [p["proposalId"] for p in after["openProposals"]] == [ids["longer"], ids["other"]]
    assert after["contestedSections"] == []
    assert after["mergedLastHour"] == 0  # a rejection merges nothing
    assert after["lastPersonAt"] is not None

    where = await (await hub.get("/api/review/open", headers=reviewer)).json()
    assert (where["total"], where["resource"]) == (1, "all")
    [item] = where["resources"]
    assert (item["resourceType"], item["resourceId"]) == ("topic", topic_id)
    assert (item["open"], item["objected"]) == (2, 0)
    assert item["url"].endswith(f"/api/review/topics/{topic_id}")
    documents = await (await hub.get("/api/review/open?resource=document", headers=reviewer)).json()
    assert (documents["resource"], documents["total"]) == ("document", 0)


async def test_roles_keys_unknown_ids_and_bad_filters_are_refused_clearly(hub, register, runtime, reviewer):
    curator = await staff_headers(runtime, "Cora Curator", roles=("curator",))
    agent = await register()
    for path in (f"/api/review/topics/{MISSING}", f"/api/review/documents/{MISSING}", "/api/review/open"):
        resp = await hub.get(path, headers=curator)
        assert resp.status == 403, path
        assert (await resp.json())["error"] == "insufficient_role"
        assert (await hub.get(path, headers=agent["headers"])).status == 401, path
    for path, code in (
        (f"/api/review/topics/{MISSING}", "topic_not_found"),
        ("/api/review/topics/nope", "topic_not_found"),
        (f"/api/review/documents/{MISSING}", "document_not_found"),
        ("/api/review/documents/%00", "document_not_found"),
    ):
        resp = await hub.get(path, headers=reviewer)
        assert resp.status == 404, path
        assert (await resp.json())["error"] == code, path
    for query, field in (("resource=wiki", "resource"), ("limit=0", "limit"), ("offset=-1", "offset")):
        resp = await hub.get(f"/api/review/open?{query}", headers=reviewer)
        assert resp.status == 400, query
        assert (await resp.json())["field"] == field, query


async def test_a_summary_lists_a_bounded_number_and_counts_everything(
    hub, register, runtime, reviewer, monkeypatch
):
    """A topic may hold thousands of open proposals: the summary lists the oldest few (here two, by a smaller
    bound) and still counts all of them, on the API and on the page."""
    from tests.pages.support import sign_in, staff_key

    esc, ids = await section_escalation(hub, register)
    asked = await (await hub.get(f"/api/review/escalations/{esc}", headers=reviewer)).json()
    topic_id = asked["resourceId"]
    monkeypatch.setattr("domain.review.activity.SHOWN", 2)
    monkeypatch.setattr("domain.review.activity.CONTESTS_SHOWN", 1)
    monkeypatch.setattr("web.hub.pages.activity.NAMES_SHOWN", 2)
    glance = await (await hub.get(f"/api/review/topics/{topic_id}", headers=reviewer)).json()
    assert (glance["openTotal"], glance["objectedTotal"]) == (3, 0)
    assert [p["proposalId"] for p in glance["openProposals"]] == [ids["short"], ids["longer"]]
    assert [c["sectionId"] for c in glance["contestedSections"]] == ["sec:answer"]

    await sign_in(hub, await staff_key(runtime, "Page Reviewer", ("reviewer",)))
    page = await (await hub.get(f"/review/topics/{topic_id}")).text()
    assert "<strong>3 proposals</strong> open" in page
    assert "(the 2 oldest of 3)" in page
    assert " and 1 more." in page  # three agents, two named
