"""Agents' comments on the PACT path (v2.0.3 §7.1 `POST /api/pact/{id}/comments`, and `GET` to list) on both
apps, through one implementation (domain/consensus/comments.py): on a document they are the document's
comments (found by the comment search, resolvable as any other), on a topic a table of their own."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.consensus_helpers import open_topic
from tests.documents_support import make_key, upload_ready

MD = b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n"
NO_TOPIC = "/api/pact/00000000-0000-4000-8000-000000000000"


async def _events(client: Any, path: str, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    resp = await client.get(f"{path}/events", params={"limit": "200"}, headers=headers or {})
    assert resp.status == 200, await resp.text()
    return (await resp.json())["events"]


# ---- hub -----------------------------------------------------------------------------------------------


async def test_topic_comments_by_joined_agents(hub, register):
    topic_id, (a, b, c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    resp = await hub.post(
        f"{base}/comments",
        headers=b["headers"],
        json={"sectionId": "sec:answer:evidence", "content": " Cite it. "},
    )
    assert resp.status == 201, await resp.text()
    first = await resp.json()
    assert first["commentId"]
    assert (first["sectionId"], first["content"], first["agentId"], first["author"]) == (
        "sec:answer:evidence",
        "Cite it.",
        b["agentId"],
        b["agentName"],
    )
    assert (first["resolved"], first["resolvedAt"]) == (False, None)
    resp = await hub.post(f"{base}/comments", headers=c["headers"], json={"content": "Looks right overall."})
    assert resp.status == 201
    whole = await resp.json()
    assert whole["sectionId"] is None

    listed = (await (await hub.get(f"{base}/comments")).json())["comments"]
    assert [x["commentId"] for x in listed] == [first["commentId"], whole["commentId"]]
    assert listed[0] == first
    only = (await (await hub.get(f"{base}/comments", params={"sectionId": "sec:answer:evidence"})).json())[
        "comments"
    ]
    assert [x["commentId"] for x in only] == [first["commentId"]]

    added = [e for e in await _events(hub, base) if e["type"] == "pact.comment.added"]
    assert [(e["agentId"], e["sectionId"]) for e in added] == [
        (b["agentId"], "sec:answer:evidence"),
        (c["agentId"], None),
    ]
    assert added[0]["data"]["commentId"] == first["commentId"]
    assert added[0]["data"]["content"] == "Cite it."


async def test_topic_comment_refusals(hub, register):
    topic_id, (a, b, c) = await open_topic(hub, register)
    base = f"/api/pact/{topic_id}"
    stranger = await register()
    resp = await hub.post(f"{base}/comments", headers=stranger["headers"], json={"content": "Hi"})
    assert resp.status == 403
    assert (await resp.json())["error"] == "not_joined"
    resp = await hub.post(
        f"{base}/comments", headers=b["headers"], json={"sectionId": "sec:nope", "content": "x"}
    )
    assert resp.status == 404
    assert (await resp.json())["error"] == "section_not_found"
    for bad in (
        {},
        {"content": "   "},
        {"content": 5},
        {"content": "x" * 10_001},
        {"content": "x", "sectionId": ""},
    ):
        resp = await hub.post(f"{base}/comments", headers=b["headers"], json=bad)
        assert resp.status == 400, bad
        assert ("sectionId" if "sectionId" in bad else "content") in (await resp.json())["detail"]
    resp = await hub.post(f"{base}/comments", json={"content": "x"})
    assert resp.status == 401
    resp = await hub.post(f"{NO_TOPIC}/comments", headers=b["headers"], json={"content": "x"})
    assert resp.status == 404
    resp = await hub.get(f"{NO_TOPIC}/comments")
    assert resp.status == 404
    assert await (await hub.get(f"{base}/comments")).json() == {
        "comments": [],
        "total": 0,
        "limit": 100,
        "offset": 0,
    }
    assert not [e for e in await _events(hub, base) if e["type"] == "pact.comment.added"]


# ---- documents -----------------------------------------------------------------------------------------


async def test_document_comments_on_the_pact_path_are_the_documents_comments(docs, runtime):
    alice = await make_key(runtime, org="Acme", name="alice-key")
    bob = await make_key(runtime, org="Acme", name="bob-key")
    doc = await upload_ready(docs, alice, MD, "plan.md")
    base = f"/api/pact/{doc['id']}"
    observer = await (
        await docs.post(f"{base}/join", headers=bob["headers"], json={"agentName": "Bob", "role": "observer"})
    ).json()
    # A person's (a key's) comment through /api/comments, before.
    resp = await docs.post(
        "/api/comments", headers=alice["headers"], json={"documentId": doc["id"], "text": "Owner's note"}
    )
    assert resp.status == 201
    note = await resp.json()

    # Observers comment too (DESIGN: they read, score salience and comment).
    resp = await docs.post(
        f"{base}/comments",
        headers=bob["headers"],
        json={"sectionId": "sec:plan:budget", "content": "Too low?"},
    )
    assert resp.status == 201, await resp.text()
    mine = await resp.json()
    assert (mine["sectionId"], mine["content"], mine["agentId"], mine["author"]) == (
        "sec:plan:budget",
        "Too low?",
        observer["agentId"],
        "Bob",
    )

    for path in (f"{base}/comments", f"/api/tap/{doc['id']}/comments"):
        listed = (await (await docs.get(path, headers=alice["headers"])).json())["comments"]
        assert [(x["commentId"], x["agentId"], x["author"], x["sectionId"]) for x in listed] == [
            (note["id"], None, note["author"], None),
            (mine["commentId"], observer["agentId"], "Bob", "sec:plan:budget"),
        ]
    only = await (
        await docs.get(f"{base}/comments", params={"sectionId": "sec:plan:budget"}, headers=alice["headers"])
    ).json()
    assert [x["commentId"] for x in only["comments"]] == [mine["commentId"]]

    # The same comment in the comment search, with its section as paragraphId.
    found = await (
        await docs.get("/api/comments/search", params={"documentId": doc["id"]}, headers=alice["headers"])
    ).json()
    assert [(c["id"], c["text"], c["author"], c["paragraphId"]) for c in found["data"]] == [
        (note["id"], "Owner's note", note["author"], None),
        (mine["commentId"], "Too low?", "Bob", "sec:plan:budget"),
    ]
    # Its author's key resolves it as any comment's author may.
    resp = await docs.put(f"/api/comments/{mine['commentId']}/resolve", headers=bob["headers"])
    assert resp.status == 200, await resp.text()
    listed = (await (await docs.get(f"{base}/comments", headers=bob["headers"])).json())["comments"]
    assert (listed[1]["resolved"], bool(listed[1]["resolvedAt"])) == (True, True)

    added = [e for e in await _events(docs, base, alice["headers"]) if e["type"] == "pact.comment.added"]
    assert [(e["agentName"], e["sectionId"]) for e in added] == [
        (alice["name"], None),
        ("Bob", "sec:plan:budget"),
    ]
    assert added[1]["agentId"] == observer["agentId"]
    assert added[1]["data"]["id"] == mine["commentId"]
    assert added[1]["data"]["paragraphId"] == "sec:plan:budget"


async def test_document_comment_refusals(docs, runtime):
    alice = await make_key(runtime, org="Acme", name="alice-key")
    doc = await upload_ready(docs, alice, MD, "plan.md")
    base = f"/api/pact/{doc['id']}"
    resp = await docs.post(f"{base}/comments", headers=alice["headers"], json={"content": "Hi"})
    assert resp.status == 403
    assert (await resp.json())["code"] == "agent.not_joined"
    await docs.post(f"{base}/join", headers=alice["headers"], json={"agentName": "Alice"})
    resp = await docs.post(
        f"{base}/comments", headers=alice["headers"], json={"sectionId": "sec:no", "content": "x"}
    )
    assert resp.status == 404
    assert (await resp.json())["code"] == "section.not_found"
    for bad in ({}, {"content": ""}, {"text": "the other API's name"}, {"content": ["x"]}):
        resp = await docs.post(f"{base}/comments", headers=alice["headers"], json=bad)
        assert resp.status == 400, bad
        assert "content" in (await resp.json())["detail"]
    resp = await docs.post(f"{base}/comments", json={"content": "x"})
    assert resp.status == 401
    # The comments scopes apply on this path as on /api/comments; joining needs tap:write.
    agent_only = await make_key(runtime, org="Acme", scopes="tap:read,tap:write")
    await docs.post(f"{base}/join", headers=agent_only["headers"], json={"agentName": "Tapper"})
    resp = await docs.post(f"{base}/comments", headers=agent_only["headers"], json={"content": "x"})
    assert resp.status == 403
    assert (await resp.json())["code"] == "insufficient_scope"
    resp = await docs.get(f"{base}/comments", headers=agent_only["headers"])
    assert resp.status == 403
    elsewhere = await make_key(runtime, org="Other")
    resp = await docs.get(f"{base}/comments", headers=elsewhere["headers"])
    assert resp.status == 404
    assert await (await docs.get(f"{base}/comments", headers=alice["headers"])).json() == {
        "comments": [],
        "total": 0,
        "limit": 100,
        "offset": 0,
    }


async def test_comments_at_once_are_all_kept(docs, hub, runtime, register):
    alice = await make_key(runtime, org="Acme", name="alice-key")
    doc = await upload_ready(docs, alice, MD, "plan.md")
    base = f"/api/pact/{doc['id']}"
    await docs.post(f"{base}/join", headers=alice["headers"], json={"agentName": "Alice"})
    answers = await asyncio.gather(
        *(
            docs.post(
                f"{base}/comments",
                headers=alice["headers"],
                json={"sectionId": "sec:plan", "content": f"#{n}"},
            )
            for n in range(4)
        )
    )
    assert [r.status for r in answers] == [201] * 4
    listed = (await (await docs.get(f"{base}/comments", headers=alice["headers"])).json())["comments"]
    assert sorted(x["content"] for x in listed) == ["#0", "#1", "#2", "#3"]

    topic_id, agents = await open_topic(hub, register)
    answers = await asyncio.gather(
        *(
            hub.post(f"/api/pact/{topic_id}/comments", headers=a["headers"], json={"content": "same"})
            for a in agents
        )
    )
    assert [r.status for r in answers] == [201] * 3
    listed = (await (await hub.get(f"/api/pact/{topic_id}/comments")).json())["comments"]
    assert sorted(x["agentId"] for x in listed) == sorted(a["agentId"] for a in agents)


async def test_comment_lists_are_paged_on_both_apps(docs, hub, runtime, register):
    topic_id, (a, b, _c) = await open_topic(hub, register)
    key = await make_key(runtime, org="Paging Org")
    doc = await upload_ready(docs, key, MD, "plan.md")
    resp = await docs.post(f"/api/pact/{doc['id']}/join", headers=key["headers"], json={"agentName": "pager"})
    assert resp.status == 201
    targets = [(hub, f"/api/pact/{topic_id}", b["headers"]), (docs, f"/api/pact/{doc['id']}", key["headers"])]
    for client, base, headers in targets:
        made = []
        for n in range(7):
            resp = await client.post(f"{base}/comments", headers=headers, json={"content": f"Note {n}"})
            assert resp.status == 201, await resp.text()
            made.append((await resp.json())["commentId"])
        seen: list[str] = []
        offset = 0
        while True:
            resp = await client.get(
                f"{base}/comments", headers=headers, params={"limit": "3", "offset": str(offset)}
            )
            assert resp.status == 200, await resp.text()
            page = await resp.json()
            assert (page["total"], page["limit"], page["offset"]) == (7, 3, offset)
            seen += [c["commentId"] for c in page["comments"]]
            offset += 3
            if offset >= page["total"]:
                break
        assert seen == made  # every comment once, oldest first
        whole = await (await client.get(f"{base}/comments", headers=headers)).json()
        assert (len(whole["comments"]), whole["limit"]) == (7, 100)
        for bad in ({"limit": "0"}, {"limit": "501"}, {"offset": "-1"}, {"limit": "x"}):
            resp = await client.get(f"{base}/comments", headers=headers, params=bad)
            assert resp.status == 400, (bad, await resp.text())
