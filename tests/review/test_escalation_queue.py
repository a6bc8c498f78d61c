"""The review API's queue is the desk's: ordered by priority (urgent, high, medium, low) then oldest first,
filtered by kind, priority, resource and status, paged in the database; one priority vocabulary on both
APIs, `normal` (the hub's former word) read as medium on input and answered as medium everywhere."""

from __future__ import annotations

from typing import Any

import pytest

from tests.consensus_helpers import open_topic
from tests.review.support import doc_escalate


async def listed(hub: Any, reviewer: dict[str, str], query: str = "") -> dict[str, Any]:
    resp = await hub.get(f"/api/review/escalations{query}", headers=reviewer)
    assert resp.status == 200, await resp.text()
    return dict(await resp.json())


def asked(queue: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["question"], e["priority"]) for e in queue["escalations"]]


async def test_the_queue_is_ordered_by_priority_then_age_filtered_and_paged(
    hub, docs, register, team, reviewer
):
    checker, base = team["keys"][1], team["base"]
    for question, priority in (
        ("Old and low?", "low"),
        ("Old and normal?", "normal"),
        ("New and high?", "high"),
    ):
        esc = await doc_escalate(docs, checker, base, question=question, priority=priority)
        assert esc["priority"] == ("medium" if priority == "normal" else priority)
    topic_id, (agent, *_rest) = await open_topic(hub, register)
    for body in (
        {"question": "Topic medium?", "priority": "medium"},
        {"question": "Newest and urgent?", "priority": "urgent"},
    ):
        resp = await hub.post(f"/api/pact/{topic_id}/escalate", headers=agent["headers"], json=body)
        assert resp.status == 201, await resp.text()
        assert (await resp.json())["priority"] == body["priority"]

    everything = [
        ("Newest and urgent?", "urgent"),
        ("New and high?", "high"),
        ("Old and normal?", "medium"),
        ("Topic medium?", "medium"),
        ("Old and low?", "low"),
    ]
    queue = await listed(hub, reviewer)
    assert asked(queue) == everything
    assert (queue["total"], queue["status"], queue["kind"], queue["priority"], queue["resource"]) == (
        5,
        "open",
        "all",
        None,
        "all",
    )

    # Real paging: every item is reachable, in the same order.
    pages = [await listed(hub, reviewer, f"?limit=2&offset={offset}") for offset in (0, 2, 4)]
    assert [item for page in pages for item in asked(page)] == everything
    assert {page["total"] for page in pages} == {5}

    # Filters: priority in either spelling, resource (or its former name, source), kind.
    for spelled in ("medium", "normal"):
        medium = await listed(hub, reviewer, f"?priority={spelled}")
        assert (asked(medium), medium["priority"]) == (everything[2:4], "medium")
    assert asked(await listed(hub, reviewer, "?resource=topic")) == [everything[0], everything[3]]
    by_source = await listed(hub, reviewer, "?source=document")
    assert (asked(by_source), by_source["resource"], by_source["source"]) == (
        [everything[1], everything[2], everything[4]],
        "document",
        "document",
    )
    # Both names given: resource, the current one, wins (a schema-valid request is never refused).
    both = await listed(hub, reviewer, "?resource=topic&source=document")
    assert (asked(both), both["resource"]) == ([everything[0], everything[3]], "topic")
    assert (await listed(hub, reviewer, "?kind=question"))["total"] == 0
    assert (await listed(hub, reviewer, "?kind=escalation&priority=urgent&resource=topic"))["total"] == 1

    # Answered ones leave the open queue for the answered list; a decision puts one in decided too.
    urgent = queue["escalations"][0]["escalationId"]
    resp = await hub.post(
        f"/api/review/escalations/{urgent}/answer", headers=reviewer, json={"answer": "Done."}
    )
    assert resp.status == 200, await resp.text()
    assert asked(await listed(hub, reviewer)) == everything[1:]
    answered = await listed(hub, reviewer, "?status=answered")
    assert (asked(answered), answered["escalations"][0]["answer"]["text"]) == ([everything[0]], "Done.")
    assert (await listed(hub, reviewer, "?status=decided"))["total"] == 0
    assert (await listed(hub, reviewer, "?status=all"))["total"] == 5


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("?priority=critical", "priority"),
        ("?status=bogus", "status"),
        ("?kind=proposal", "kind"),
        ("?resource=wiki", "resource"),
        ("?limit=0", "limit"),
    ],
)
async def test_a_bad_filter_is_a_400_naming_it(hub, reviewer, query, field):
    resp = await hub.get(f"/api/review/escalations{query}", headers=reviewer)
    assert resp.status == 400, await resp.text()
    assert field in await resp.text()


async def test_the_document_api_takes_its_spec_levels_and_the_hubs_spelling(docs, team):
    checker, base = team["keys"][1], team["base"]
    resp = await docs.post(
        f"{base}/escalate", headers=checker["headers"], json={"question": "Now?", "priority": "urgent"}
    )
    assert resp.status == 400, await resp.text()
    assert "priority" in await resp.text()
    esc = await doc_escalate(docs, checker, base, question="Later?")
    assert esc["priority"] == "medium"
