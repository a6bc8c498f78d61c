"""A reviewer removes an agent from a topic and readmits it (PACT §9.2, "remove an agent: force agent.leave"):
the agent leaves at once (its section lock released, it no longer proposes, votes or counts among the
voters), the removal is on the topic's stream as `pact.agent.left` by an Individual with who and why, it may
not join again (a clear 403) until a reviewer readmits it, and then it joins itself. Repeats change nothing;
other roles, agents' keys, unknown topics and agents, and bad notes are refused clearly."""

from __future__ import annotations

import asyncio

from tests.axiom_helpers import staff_headers
from tests.consensus_helpers import open_topic, propose
from tests.review.support import audit_ops

MISSING = "00000000-0000-4000-8000-000000000000"


async def active_agents(hub, topic_id):
    listed = await (await hub.get(f"/api/pact/{topic_id}/agents")).json()
    return {a["agentId"] for a in listed if a["isActive"]}


async def call(hub, headers, topic_id, agent_id, action, expect=200, **body):
    resp = await hub.post(
        f"/api/review/topics/{topic_id}/agents/{agent_id}/{action}", headers=headers, json=body
    )
    assert resp.status == expect, await resp.text()
    return await resp.json()


async def test_a_removed_agent_leaves_and_may_not_come_back_until_readmitted(
    hub, register, runtime, reviewer
):
    topic_id, (author, b, c) = await open_topic(hub, register)
    lock = f"/api/pact/{topic_id}/sections/sec:answer/lock"
    resp = await hub.post(lock, headers=b["headers"], json={"ttlSeconds": 60})
    assert resp.status in (200, 201), await resp.text()
    pending = await propose(hub, topic_id, author, sectionId="sec:discussion", newContent="Later, now.")

    done = await call(
        hub, reviewer, topic_id, b["agentId"], "remove", note="It keeps citing a withdrawn paper."
    )
    assert (done["topicId"], done["agentId"], done["removed"], done["changed"]) == (
        topic_id,
        b["agentId"],
        True,
        True,
    )
    assert done["removedBy"] == done["actedBy"] == "Rey Reviewer"
    assert done["reason"] == "It keeps citing a withdrawn paper."
    assert done["removedAt"]

    # Gone at once: not listed as active, its lock released, its proposals and votes refused.
    active = await active_agents(hub, topic_id)
    assert b["agentId"] not in active
    resp = await hub.post(lock, headers=c["headers"], json={"ttlSeconds": 60})
    assert resp.status in (200, 201), await resp.text()  # b's lock went with it
    resp = await hub.post(
        f"/api/pact/{topic_id}/proposals",
        headers=b["headers"],
        json={"sectionId": "sec:discussion", "newContent": "Mine.", "summary": "x"},
    )
    assert resp.status == 403
    assert (await resp.json())["error"] == "not_joined"
    resp = await hub.post(f"/api/pact/{topic_id}/proposals/{pending['id']}/approve", headers=b["headers"])
    assert resp.status == 403, await resp.text()

    # It may not join again, and is told why and who can let it back.
    resp = await hub.post(f"/api/pact/{topic_id}/join", headers=b["headers"])
    assert resp.status == 403
    refused = await resp.json()
    assert refused["error"] == "removed_by_reviewer"
    assert "withdrawn paper" in refused["detail"], refused
    assert "readmit" in refused["detail"], refused

    # On the stream, by a person, saying who and why; in the audit trail with the note.
    body = await (await hub.get(f"/api/pact/{topic_id}/events", params={"limit": "200"})).json()
    left = [e for e in body["events"] if e["type"] == "pact.agent.left"]
    assert len(left) == 1
    assert left[0]["actorKind"] == "Individual"
    assert left[0]["data"]["agentId"] == b["agentId"]
    assert left[0]["data"]["removedBy"] == "Rey Reviewer"
    assert left[0]["data"]["reason"] == "It keeps citing a withdrawn paper."
    unlocked = [e for e in body["events"] if e["type"] == "pact.section.unlocked"]
    assert [e["data"].get("reason") for e in unlocked][:1] == ["left"]

    again = await call(hub, reviewer, topic_id, b["agentId"], "remove", note="Again.")
    assert (again["changed"], again["reason"]) == (False, "It keeps citing a withdrawn paper.")

    back = await call(hub, reviewer, topic_id, b["agentId"], "readmit", note="The paper was reinstated.")
    assert (back["removed"], back["changed"], back["removedAt"], back["reason"]) == (False, True, None, None)
    resp = await hub.post(f"/api/pact/{topic_id}/proposals/{pending['id']}/approve", headers=b["headers"])
    assert resp.status == 403  # readmitted, not joined: it joins itself
    resp = await hub.post(f"/api/pact/{topic_id}/join", headers=b["headers"])
    assert resp.status == 200, await resp.text()
    resp = await hub.post(f"/api/pact/{topic_id}/proposals/{pending['id']}/approve", headers=b["headers"])
    assert resp.status == 200, await resp.text()
    twice = await call(hub, reviewer, topic_id, b["agentId"], "readmit", note="Still fine.")
    assert twice["changed"] is False

    ops = [op for op, _ in await audit_ops(runtime, topic_id)]
    assert ops.count("review.topic.agent_remove") == 1
    assert ops.count("review.topic.agent_readmit") == 1


async def test_an_agent_that_had_left_is_barred_too(hub, register, reviewer):
    topic_id, (_author, b, _c) = await open_topic(hub, register)
    resp = await hub.delete(f"/api/pact/{topic_id}/leave", headers=b["headers"])
    assert resp.status == 200, await resp.text()
    done = await call(hub, reviewer, topic_id, b["agentId"], "remove", note="Not welcome back.")
    assert done["changed"] is True
    resp = await hub.post(f"/api/pact/{topic_id}/join", headers=b["headers"])
    assert resp.status == 403
    assert (await resp.json())["error"] == "removed_by_reviewer"
    resp = await hub.post(f"/api/pact/{topic_id}/_onboard", headers=b["headers"], json={"constraints": []})
    assert resp.status == 403, await resp.text()  # PACT's join-and-publish, refused alike
    assert (await resp.json())["error"] == "removed_by_reviewer"
    body = await (await hub.get(f"/api/pact/{topic_id}/events", params={"limit": "200"})).json()
    left = [e for e in body["events"] if e["type"] == "pact.agent.left"]
    assert [e["actorKind"] for e in left] == ["AiAgent", "Individual"]
    # Both answers are in the API's documents, which agents' clients are generated from.
    paths = (await (await hub.get("/openapi.json")).json())["paths"]
    for path in ("/api/pact/{topicId}/join", "/api/pact/{topicId}/_onboard"):
        assert "removed_by_reviewer" in paths[path]["post"]["responses"]["403"]["description"], path


async def test_a_removal_and_a_rejoin_at_once_never_leave_the_agent_joined(hub, register, reviewer):
    """The removal takes the participant's row lock; the rejoin is one conditional UPDATE that skips a
    removed row: whichever comes first, the agent ends removed and not joined."""
    topic_id, (_author, b, _c) = await open_topic(hub, register)
    for _ in range(3):
        resp = await hub.delete(f"/api/pact/{topic_id}/leave", headers=b["headers"])
        assert resp.status == 200, await resp.text()
        removal, join = await asyncio.gather(
            hub.post(
                f"/api/review/topics/{topic_id}/agents/{b['agentId']}/remove",
                headers=reviewer,
                json={"note": "Race."},
            ),
            hub.post(f"/api/pact/{topic_id}/join", headers=b["headers"]),
        )
        assert removal.status == 200, await removal.text()
        assert join.status in (200, 403), await join.text()
        active = await active_agents(hub, topic_id)
        assert b["agentId"] not in active
        resp = await hub.post(f"/api/pact/{topic_id}/join", headers=b["headers"])
        assert resp.status == 403
        await call(hub, reviewer, topic_id, b["agentId"], "readmit", note="Again.")
        resp = await hub.post(f"/api/pact/{topic_id}/join", headers=b["headers"])
        assert resp.status == 200, await resp.text()


async def test_roles_keys_unknown_ids_and_bad_notes_are_refused(hub, register, runtime, reviewer):
    topic_id, (author, b, _c) = await open_topic(hub, register)
    url = f"/api/review/topics/{topic_id}/agents/{b['agentId']}/remove"
    curator = await staff_headers(runtime, "Cora Curator", roles=("curator",))
    resp = await hub.post(url, headers=curator, json={"note": "x"})
    assert resp.status == 403
    assert (await resp.json())["error"] == "insufficient_role"
    resp = await hub.post(url, headers=author["headers"], json={"note": "x"})  # an agent, the creator too
    assert resp.status == 401
    stranger = await register()
    for path, code in (
        (f"/api/review/topics/{MISSING}/agents/{b['agentId']}/remove", "topic_not_found"),
        (f"/api/review/topics/not-a-topic/agents/{b['agentId']}/readmit", "topic_not_found"),
        (f"/api/review/topics/{topic_id}/agents/{stranger['agentId']}/remove", "participant_not_found"),
        (f"/api/review/topics/{topic_id}/agents/{MISSING}/readmit", "participant_not_found"),
    ):
        resp = await hub.post(path, headers=reviewer, json={"note": "x"})
        assert resp.status == 404, (path, await resp.text())
        assert (await resp.json())["error"] == code
    for bad in ({}, {"note": "   "}, {"note": "x" * 2001}, {"note": 5}):
        resp = await hub.post(url, headers=reviewer, json=bad)
        assert resp.status == 400, (bad, await resp.text())
        assert (await resp.json())["field"] == "note"
    resp = await hub.post(
        url,
        headers={**reviewer, "Content-Type": "application/json"},
        data=b"\xff\xfe not json",
    )
    assert resp.status == 400, await resp.text()
    # Nothing was done by any of those.
    active = await active_agents(hub, topic_id)
    assert b["agentId"] in active
