"""PACT's withdrawals (v2.0.3 §7.1) on both apps, over HTTP: an author withdraws its own pending proposal
(`DELETE …/proposals/{id}`: status withdrawn, `pact.proposal.withdrawn`, a topic's stake back, the
escalation a human-only policy raised for it closed, its author no longer counted among the topic's
proposers) and its own constraint (`DELETE …/constraints/{id}`: kept as withdrawn, no longer listed as
active, `pact.constraint.withdrawn`); everyone else, and every decided proposal, is refused with a clear
4xx. A withdrawal racing the approval that would merge the proposal, or a reviewer's decision, ends in
exactly one outcome (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import pytest
from aiohttp import web

from tests.axiom_helpers import staff_headers
from tests.consensus_helpers import balance, content, open_topic, propose, vote
from tests.documents_support import make_key, upload_ready
from tests.pages.support import sign_in, staff_key
from tests.review.support import asked_about_a_human_only_proposal
from tests.test_mcp import call, connect, text_of
from tests.waiting import eventually

MISSING = "00000000-0000-4000-8000-000000000000"
MD = b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n\n## Risks\n\nMany.\n"


@pytest.fixture
async def reviewer(runtime: Any) -> dict[str, str]:
    return await staff_headers(runtime, "Rey Reviewer", roles=("reviewer",))


@pytest.fixture
async def hook(aiohttp_server: Any, settings: Any, monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """The escalation webhook, on loopback: the bodies it received, in order."""
    received: list[dict] = []

    async def receive(request: web.Request) -> web.Response:
        received.append(await request.json())
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", receive)
    server = await aiohttp_server(app)
    monkeypatch.setattr(settings, "escalation_webhook_url", str(server.make_url("/hook")))
    monkeypatch.setattr(settings, "outbound_trusted_hosts", [server.host])
    return received


async def withdraw(client: Any, path: str, headers: dict[str, str], expect: int = 200) -> dict[str, Any]:
    resp = await client.delete(path, headers=headers)
    assert resp.status == expect, await resp.text()
    return dict(await resp.json(content_type=None))


async def topic_events(hub: Any, topic_id: str) -> list[dict[str, Any]]:
    body = await (await hub.get(f"/api/pact/{topic_id}/events", params={"limit": "200"})).json()
    return list(body["events"])


async def doc_events(docs: Any, key: dict, base: str) -> list[dict[str, Any]]:
    resp = await docs.get(f"{base}/events?after=0&limit=200", headers=key["headers"])
    assert resp.status == 200, await resp.text()
    return list((await resp.json())["events"])


async def doc_team(
    docs: Any, runtime: Any, roles: tuple[str, ...] = ("editor", "reviewer", "reviewer"), **fields: str
) -> tuple[list[dict], str, str]:
    """A ready document joined by one key per role: (keys, document id, /api/tap base path)."""
    keys = [await make_key(runtime, org="Acme", name=f"k{i}") for i in range(len(roles))]
    doc = await upload_ready(docs, keys[0], MD, "plan.md", **fields)
    base = f"/api/tap/{doc['id']}"
    for i, (key, role) in enumerate(zip(keys, roles, strict=True)):
        resp = await docs.post(
            f"{base}/join", headers=key["headers"], json={"agentName": f"a{i}", "role": role}
        )
        assert resp.status == 201, await resp.text()
    return keys, doc["id"], base


async def doc_propose(docs: Any, key: dict, base: str, text: str = "New money.") -> dict[str, Any]:
    resp = await docs.post(
        f"{base}/proposals",
        headers=key["headers"],
        json={"sectionId": "sec:plan:budget", "content": text, "summary": "s"},
    )
    assert resp.status == 201, await resp.text()
    return dict(await resp.json())


# ---- proposals on a topic -----------------------------------------------------------------------------


async def test_an_author_withdraws_its_pending_topic_proposal_and_gets_its_stake_back(hub, register):
    topic_id, (author, b, c) = await open_topic(hub, register)
    start = await balance(hub, author)
    made = await propose(hub, topic_id, author, newContent="Withdrawn text.")
    assert await balance(hub, author) == start - 5
    await vote(hub, topic_id, made["id"], b, "approve")  # one of two: still pending
    url = f"/api/pact/{topic_id}/proposals/{made['id']}"

    refused = await withdraw(hub, url, b["headers"], expect=403)  # not its author
    assert refused["error"] == "not_author"
    assert (await withdraw(hub, url, {}, expect=401))["error"]

    done = await withdraw(hub, url, author["headers"])
    assert (done["id"], done["status"], done["approveCount"]) == (made["id"], "withdrawn", 1)
    assert done["resolvedAt"] is not None
    assert await balance(hub, author) == start  # the stake came back
    found = await (await hub.get(url)).json()
    assert found["status"] == "withdrawn"
    assert (await content(hub, topic_id))["version"] == 1

    # Decided: no second withdrawal, no more votes
    again = await withdraw(hub, url, author["headers"], expect=409)
    assert (again["error"], again["proposalStatus"]) == ("proposal_not_pending", "withdrawn")
    assert (await vote(hub, topic_id, made["id"], c, "approve", expect=409))[
        "error"
    ] == "proposal_not_pending"

    [event] = [e for e in await topic_events(hub, topic_id) if e["type"] == "pact.proposal.withdrawn"]
    assert (event["actorId"], event["correlationId"], event["sectionId"]) == (
        author["agentId"],
        made["id"],
        "sec:answer",
    )
    assert event["data"] == {"proposalId": made["id"], "approveCount": 1, "rejectCount": 0, "objectCount": 0}
    listed = await (await hub.get(f"/api/pact/{topic_id}/proposals")).json()
    assert [p["status"] for p in listed["proposals"]] == ["withdrawn"]


async def test_unknown_and_decided_topic_proposals_are_refused(hub, register):
    topic_id, (author, b, c) = await open_topic(hub, register)
    made = await propose(hub, topic_id, author)
    await vote(hub, topic_id, made["id"], b, "approve")
    await vote(hub, topic_id, made["id"], c, "approve")  # merged
    base = f"/api/pact/{topic_id}/proposals"
    merged = await withdraw(hub, f"{base}/{made['id']}", author["headers"], expect=409)
    assert (merged["error"], merged["proposalStatus"]) == ("proposal_not_pending", "merged")
    for missing in (MISSING, "not-a-uuid"):
        assert (await withdraw(hub, f"{base}/{missing}", author["headers"], expect=404))["error"] == (
            "proposal_not_found"
        )
    other, _agents = await open_topic(hub, register)
    elsewhere = await withdraw(
        hub, f"/api/pact/{other}/proposals/{made['id']}", author["headers"], expect=404
    )
    assert elsewhere["error"] == "proposal_not_found"  # a proposal of another topic
    gone = await withdraw(hub, f"/api/pact/{MISSING}/proposals/{made['id']}", author["headers"], expect=404)
    assert gone["error"] == "topic_not_found"


async def test_authors_of_withdrawn_proposals_are_not_counted_as_the_topics_proposers(hub, register):
    """Consensus needs as many aligned agents as the topic has proposers (at least the tier's 3): four
    authors would need four, but three of them withdrew, so three aligned agents reach it, at the moment
    the last pending proposal is withdrawn."""
    topic_id, agents = await open_topic(hub, register, n_agents=5)
    a0, a1, a2, a3, a4 = agents
    merged = await propose(hub, topic_id, a1, newContent="The settled answer.")
    await vote(hub, topic_id, merged["id"], a2, "approve")
    await vote(hub, topic_id, merged["id"], a3, "approve")
    pending = [
        await propose(
            hub, topic_id, agent, sectionId="sec:discussion", newContent=f"By {agent['agentName']}."
        )
        for agent in (a2, a3, a4)
    ]
    for agent in (a0, a1, a2):
        resp = await hub.post(
            f"/api/pact/{topic_id}/done", headers=agent["headers"], json={"status": "aligned"}
        )
        assert resp.status == 200, await resp.text()
    for made, agent in zip(pending, (a2, a3, a4), strict=True):
        topic = await (await hub.get(f"/api/pact/{topic_id}")).json()
        assert topic["status"] == "open"  # a proposal is still pending
        await withdraw(hub, f"/api/pact/{topic_id}/proposals/{made['id']}", agent["headers"])
    topic = await (await hub.get(f"/api/pact/{topic_id}")).json()
    assert topic["status"] == "consensus"


async def test_withdrawing_a_human_only_proposal_closes_the_escalation_its_policy_raised(
    hub, register, runtime, reviewer, hook
):
    setup = await asked_about_a_human_only_proposal(hub, register, reviewer)
    topic_id, author, made, policy = setup["topic_id"], setup["author"], setup["proposal"], setup["raised"]
    asked = {"escalationId": setup["asked"]}  # an agent's question about the proposal: stays open

    await withdraw(hub, f"/api/pact/{topic_id}/proposals/{made['id']}", author["headers"])

    still_open = await (await hub.get("/api/review/escalations", headers=reviewer)).json()
    assert [e["escalationId"] for e in still_open["escalations"]] == [asked["escalationId"]]
    closed = await (await hub.get("/api/review/escalations?status=closed", headers=reviewer)).json()
    [item] = closed["escalations"]
    assert (item["escalationId"], item["status"]) == (policy["escalationId"], "closed")
    assert item["proposal"]["status"] == "withdrawn"
    assert "withdrawn by its author" in item["answer"]["text"]
    assert (item["answer"]["answeredBy"], item["answer"]["decision"]) == (author["agentName"], None)
    everything = await (await hub.get("/api/review/escalations?status=all", headers=reviewer)).json()
    assert everything["total"] == 2

    late = await hub.post(
        f"/api/review/escalations/{policy['escalationId']}/answer",
        headers=reviewer,
        json={"answer": "Approved", "decision": "approve"},
    )
    assert late.status == 409
    assert (await late.json())["error"] == "escalation_closed"
    page = await hub.get(f"/api/review/escalations/{policy['escalationId']}", headers=reviewer)
    assert (await page.json())["status"] == "closed"

    events = await topic_events(hub, topic_id)
    [closing] = [e for e in events if e["type"] == "pact.escalation.closed"]
    assert (closing["correlationId"], closing["inResponseTo"]) == (made["id"], policy["escalationId"])
    assert closing["data"]["escalationId"] == policy["escalationId"]
    types = [e["type"] for e in events]
    assert types.index("pact.proposal.withdrawn") < types.index("pact.escalation.closed")

    async def told() -> list[dict]:
        return [w for w in hook if w["event"] == "escalation.closed"]

    [notice] = await eventually(told)
    assert (notice["escalation"]["escalationId"], notice["escalation"]["status"]) == (
        policy["escalationId"],
        "closed",
    )
    assert notice["escalation"]["closedBy"] == author["agentName"]


# ---- proposals on a document --------------------------------------------------------------------------


async def test_an_agent_withdraws_its_pending_document_proposal_on_both_paths(docs, runtime):
    keys, doc_id, base = await doc_team(docs, runtime, ("editor", "reviewer", "reviewer", "observer"))
    author, reviewer_key, _r2, observer = keys
    made = await doc_propose(docs, author, base)
    url = f"{base}/proposals/{made['proposalId']}"

    assert (await withdraw(docs, url, reviewer_key["headers"], expect=403))["code"] == "not_author"
    assert (await withdraw(docs, url, observer["headers"], expect=403))["code"] == "not_author"
    outsider = await make_key(runtime, org="Acme", name="outsider")  # same organisation, never joined
    assert (await withdraw(docs, url, outsider["headers"], expect=403))["code"] == "agent.not_joined"
    stranger = await make_key(runtime, org="Elsewhere")
    assert (await withdraw(docs, url, stranger["headers"], expect=404))["code"] == "document_not_found"

    done = await withdraw(docs, f"/api/pact/{doc_id}/proposals/{made['proposalId']}", author["headers"])
    assert (done["proposalId"], done["status"]) == (made["proposalId"], "withdrawn")
    assert done["resolvedAt"] is not None
    again = await withdraw(docs, url, author["headers"], expect=409)
    assert (again["code"], again["proposalStatus"]) == ("proposal_not_pending", "withdrawn")
    approve = await docs.post(f"{url}/approve", headers=reviewer_key["headers"], json={})
    assert approve.status == 409

    listed = await (await docs.get(f"{base}/proposals?status=withdrawn", headers=author["headers"])).json()
    assert [p["proposalId"] for p in listed["proposals"]] == [made["proposalId"]]
    [event] = [e for e in await doc_events(docs, author, base) if e["type"] == "pact.proposal.withdrawn"]
    assert (event["actorId"], event["correlationId"]) == (made["agentId"], made["proposalId"])
    for missing in (MISSING, "nope"):
        gone = await withdraw(docs, f"{base}/proposals/{missing}", author["headers"], expect=404)
        assert gone["code"] == "proposal_not_found"


async def test_a_merged_document_proposal_cannot_be_withdrawn(docs, runtime):
    keys, _doc_id, base = await doc_team(docs, runtime)
    made = await doc_propose(docs, keys[0], base)
    for key in keys[1:]:
        resp = await docs.post(
            f"{base}/proposals/{made['proposalId']}/approve", headers=key["headers"], json={}
        )
        assert resp.status == 200
    refused = await withdraw(docs, f"{base}/proposals/{made['proposalId']}", keys[0]["headers"], expect=409)
    assert (refused["code"], refused["proposalStatus"]) == ("proposal_not_pending", "approved")


async def test_withdrawing_a_human_only_document_proposal_closes_its_escalation(docs, hub, runtime, reviewer):
    keys, _doc_id, base = await doc_team(docs, runtime, approvalPolicy="human-only")
    made = await doc_propose(docs, keys[0], base)
    queue = await (await hub.get("/api/review/escalations?source=document", headers=reviewer)).json()
    [raised] = queue["escalations"]
    await withdraw(docs, f"{base}/proposals/{made['proposalId']}", keys[0]["headers"])
    assert (await (await hub.get("/api/review/escalations", headers=reviewer)).json())["total"] == 0
    closed = await (await hub.get("/api/review/escalations?status=closed", headers=reviewer)).json()
    assert [e["escalationId"] for e in closed["escalations"]] == [raised["escalationId"]]
    types = [e["type"] for e in await doc_events(docs, keys[0], base)]
    assert "pact.escalation.closed" in types

    # On the review desk: off the queue, and its page says it closed (no answer form)
    await sign_in(hub, await staff_key(runtime, "Page Reviewer", ("reviewer",)))
    assert raised["escalationId"] not in await (await hub.get("/review/")).text()
    page = await (await hub.get(f"/review/escalations/{raised['escalationId']}")).text()
    assert '<h2 id="answered">Closed</h2>' in page
    assert "withdrawn by its author" in page
    assert "/answer" not in page


# ---- races ---------------------------------------------------------------------------------------------


async def _status(client: Any, method: str, url: str, headers: dict[str, str], **kw: Any) -> int:
    resp = await client.request(method, url, headers=headers, **kw)
    await resp.read()
    return resp.status


async def test_a_withdrawal_racing_the_merging_approval_on_a_topic_has_one_outcome(
    hub, register, settings, monkeypatch
):
    monkeypatch.setattr(settings, "rate_limit_register", 1000)
    raced = []
    for _ in range(4):
        topic_id, (author, b, c) = await open_topic(hub, register)
        made = await propose(hub, topic_id, author, newContent="Raced text.")
        await vote(hub, topic_id, made["id"], b, "approve")  # the next approval merges
        raced.append((topic_id, made["id"], author, c))
    results = await asyncio.gather(
        *(
            asyncio.gather(
                _status(hub, "DELETE", f"/api/pact/{t}/proposals/{p}", a["headers"]),
                _status(hub, "POST", f"/api/pact/{t}/proposals/{p}/approve", c["headers"]),
            )
            for t, p, a, c in raced
        )
    )
    for (topic_id, proposal_id, _a, _c), (withdrawn, approved) in zip(raced, results, strict=True):
        assert sorted((withdrawn, approved)) == [200, 409]
        found = await (await hub.get(f"/api/pact/{topic_id}/proposals/{proposal_id}")).json()
        body = await content(hub, topic_id)
        types = Counter(e["type"] for e in await topic_events(hub, topic_id))
        if withdrawn == 200:
            assert (found["status"], body["version"], "Raced text." in body["content"]) == (
                "withdrawn",
                1,
                False,
            )
            assert (types["pact.proposal.withdrawn"], types["pact.proposal.merged"]) == (1, 0)
        else:
            assert (found["status"], body["version"], body["content"].count("Raced text.")) == (
                "merged",
                2,
                1,
            )
            assert (types["pact.proposal.withdrawn"], types["pact.proposal.merged"]) == (0, 1)


async def test_a_withdrawal_racing_the_merging_approval_on_a_document_has_one_outcome(docs, runtime):
    raced = []
    for _ in range(3):
        keys, doc_id, base = await doc_team(docs, runtime)
        made = await doc_propose(docs, keys[0], base, text="Raced money.")
        resp = await docs.post(
            f"{base}/proposals/{made['proposalId']}/approve", headers=keys[1]["headers"], json={}
        )
        assert resp.status == 200
        raced.append((keys, doc_id, base, made["proposalId"]))
    results = await asyncio.gather(
        *(
            asyncio.gather(
                _status(docs, "DELETE", f"{base}/proposals/{p}", keys[0]["headers"]),
                _status(docs, "POST", f"{base}/proposals/{p}/approve", keys[2]["headers"], json={}),
            )
            for keys, _d, base, p in raced
        )
    )
    for (keys, _doc_id, base, proposal_id), (withdrawn, approved) in zip(raced, results, strict=True):
        assert sorted((withdrawn, approved)) == [200, 409]
        listed = await (await docs.get(f"{base}/proposals", headers=keys[0]["headers"])).json()
        [found] = [p for p in listed["proposals"] if p["proposalId"] == proposal_id]
        text = (await (await docs.get(f"{base}/content", headers=keys[0]["headers"])).json())["content"]
        assert found["status"] == ("withdrawn" if withdrawn == 200 else "approved")
        assert text.count("Raced money.") == (0 if withdrawn == 200 else 1)


async def test_a_withdrawal_racing_a_reviewers_decision_has_one_outcome(
    hub, register, reviewer, settings, monkeypatch
):
    """The reviewer's answer locks the escalation, then the topic; the withdrawal takes them in that order
    too, so the two never deadlock (PostgreSQL) and exactly one of them decides the proposal."""
    monkeypatch.setattr(settings, "rate_limit_register", 1000)
    raced = []
    for _ in range(3):
        topic_id, (author, _b, _c) = await open_topic(hub, register, approvalPolicy="human-only")
        made = await propose(hub, topic_id, author, newContent="Decided once.")
        raced.append((topic_id, made["id"], author))
    queue = await (await hub.get("/api/review/escalations", headers=reviewer)).json()
    by_proposal = {e["proposal"]["proposalId"]: e["escalationId"] for e in queue["escalations"]}
    results = await asyncio.gather(
        *(
            asyncio.gather(
                _status(hub, "DELETE", f"/api/pact/{t}/proposals/{p}", a["headers"]),
                _status(
                    hub,
                    "POST",
                    f"/api/review/escalations/{by_proposal[p]}/answer",
                    reviewer,
                    json={"answer": "Yes", "decision": "approve"},
                ),
            )
            for t, p, a in raced
        )
    )
    for (topic_id, proposal_id, _a), (withdrawn, answered) in zip(raced, results, strict=True):
        assert sorted((withdrawn, answered)) == [200, 409]
        found = await (await hub.get(f"/api/pact/{topic_id}/proposals/{proposal_id}")).json()
        assert found["status"] == ("withdrawn" if withdrawn == 200 else "merged")
        item = await (
            await hub.get(f"/api/review/escalations/{by_proposal[proposal_id]}", headers=reviewer)
        ).json()
        assert item["status"] == ("closed" if withdrawn == 200 else "answered")


# ---- constraints ----------------------------------------------------------------------------------------


async def test_a_topic_constraint_is_withdrawn_by_its_author_and_kept_as_withdrawn(hub, register):
    topic_id, (author, other, _c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}/constraints"
    resp = await hub.post(
        base, headers=author["headers"], json={"sectionId": "sec:answer", "boundary": "No guesses"}
    )
    assert resp.status == 201
    made = await resp.json()
    assert (made["status"], made["withdrawnAt"], made["withdrawnBy"]) == ("active", None, None)
    resp = await hub.post(
        base, headers=other["headers"], json={"sectionId": "sec:answer", "boundary": "Cite"}
    )
    kept = await resp.json()

    assert (await withdraw(hub, f"{base}/{made['id']}", other["headers"], expect=403))[
        "error"
    ] == "not_author"
    done = await withdraw(hub, f"{base}/{made['id']}", author["headers"])
    assert (done["id"], done["status"], done["withdrawnBy"], done["withdrawnByName"]) == (
        made["id"],
        "withdrawn",
        author["agentId"],
        author["agentName"],
    )
    assert done["withdrawnAt"] >= made["createdAt"]
    active = await (await hub.get(base)).json()
    assert [c["id"] for c in active["constraints"]] == [kept["id"]]
    withdrawn = await (await hub.get(f"{base}?status=withdrawn&sectionId=sec:answer")).json()
    assert [(c["id"], c["status"]) for c in withdrawn["constraints"]] == [(made["id"], "withdrawn")]
    assert (await hub.get(f"{base}?status=gone")).status == 400

    again = await withdraw(hub, f"{base}/{made['id']}", author["headers"], expect=409)
    assert again["error"] == "constraint_withdrawn"
    for missing in (MISSING, "x"):
        assert (await withdraw(hub, f"{base}/{missing}", author["headers"], expect=404))["error"] == (
            "constraint_not_found"
        )
    [event] = [e for e in await topic_events(hub, topic_id) if e["type"] == "pact.constraint.withdrawn"]
    assert (event["actorId"], event["correlationId"], event["data"]["category"]) == (
        author["agentId"],
        made["id"],
        "general",
    )


async def test_a_document_constraint_is_withdrawn_by_its_author(docs, runtime):
    keys, doc_id, base = await doc_team(docs, runtime)
    resp = await docs.post(
        f"{base}/constraints",
        headers=keys[1]["headers"],
        json={"sectionId": "sec:plan:budget", "boundary": "Under 1M", "type": "must"},
    )
    made = await resp.json()
    url = f"/api/pact/{doc_id}/constraints/{made['constraintId']}"
    assert (await withdraw(docs, url, keys[0]["headers"], expect=403))["code"] == "not_author"
    done = await withdraw(docs, url, keys[1]["headers"])
    assert (done["status"], done["type"], done["withdrawnBy"]) == ("withdrawn", "must", made["agentId"])
    listed = await (await docs.get(f"{base}/constraints", headers=keys[0]["headers"])).json()
    assert listed["constraints"] == []
    listed = await (await docs.get(f"{base}/constraints?status=withdrawn", headers=keys[0]["headers"])).json()
    assert [c["constraintId"] for c in listed["constraints"]] == [made["constraintId"]]
    assert (await withdraw(docs, url, keys[1]["headers"], expect=409))["code"] == "constraint_withdrawn"
    types = [e["type"] for e in await doc_events(docs, keys[0], base)]
    assert types.count("pact.constraint.withdrawn") == 1


# ---- MCP -------------------------------------------------------------------------------------------------


async def test_pact_withdraw_tool(docs, runtime):
    keys, doc_id, base = await doc_team(docs, runtime)
    made = await doc_propose(docs, keys[0], base)
    async with connect(docs, keys[1]) as other:
        refused = await other.call_tool(
            "pact_withdraw", {"documentId": doc_id, "proposalId": made["proposalId"]}
        )
        assert refused.is_error
        assert json.loads(text_of(refused))["error"] == "not_author"
        tools = {t.name: t for t in (await other.list_tools()).tools}
    hints = tools["pact_withdraw"].annotations
    assert hints is not None
    assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (False, True, True)
    async with connect(docs, keys[0]) as author:
        done = await call(author, "pact_withdraw", documentId=doc_id, proposalId=made["proposalId"])
        assert (done["proposalId"], done["status"]) == (made["proposalId"], "withdrawn")
        again = await author.call_tool(
            "pact_withdraw", {"documentId": doc_id, "proposalId": made["proposalId"]}
        )
        assert json.loads(text_of(again))["status"] == 409
