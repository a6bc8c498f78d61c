"""Paging and filtering of the list endpoints, through HTTP: for any page size the pages cover every item
once, in the list's order, and a filter is applied before the page is cut (a page holds `limit` matching
items when there are that many). Offset lists (documents, comments, topics, agents) and keyset lists
(events, poll; the audit trail's are in test_audit.py)."""

from __future__ import annotations

from typing import Any

from tests.consensus_helpers import open_topic
from tests.documents_support import make_key, upload, upload_ready

TOPIC = {"tier": "empirical", "content": "# Answer\n\nYes.\n"}


async def all_offset_pages(
    client: Any, path: str, headers: dict[str, str], items: str, size: int, *, paged_by: str = "offset"
) -> tuple[list[dict[str, Any]], set[int]]:
    """Every page of an offset list (page/pageSize or limit/offset) until an empty one, and the totals."""
    sep = "&" if "?" in path else "?"
    found: list[dict[str, Any]] = []
    totals: set[int] = set()
    for n in range(1000):
        if paged_by == "page":
            url = f"{path}{sep}page={n + 1}&pageSize={size}"
        else:
            url = f"{path}{sep}limit={size}&offset={n * size}"
        resp = await client.get(url, headers=headers)
        assert resp.status == 200, (url, await resp.text())
        body = await resp.json()
        totals.add(body["total"])
        if not body[items]:
            return found, totals
        assert len(body[items]) <= size
        found.extend(body[items])
    raise AssertionError("the pages never ended")


# ---- documents --------------------------------------------------------------------------------------------


async def test_document_pages_cover_every_document_once_newest_first(docs: Any, runtime: Any) -> None:
    acme, other = await make_key(runtime, "Acme"), await make_key(runtime, "Other")
    made = []
    for n in range(7):
        resp = await upload(
            docs, acme, f"# Doc {n}\n".encode(), f"d{n}.md", tags="finance" if n % 2 else "hr"
        )
        assert resp.status == 202
        made.append((await resp.json())["id"])
    await upload(docs, other, b"# Theirs\n", "theirs.md", tags="finance")
    everything, totals = await all_offset_pages(
        docs, "/api/documents", acme["headers"], "data", 100, paged_by="page"
    )
    assert totals == {7}
    assert [d["id"] for d in everything] == made[::-1]  # newest first
    for size in (1, 2, 3, 6, 7):
        pages, totals = await all_offset_pages(
            docs, "/api/documents", acme["headers"], "data", size, paged_by="page"
        )
        assert [d["id"] for d in pages] == made[::-1], size  # (statuses move on as conversions finish)
        assert totals == {7}


async def test_tag_filter_applies_before_the_page_and_ignores_case(docs: Any, runtime: Any) -> None:
    acme, other = await make_key(runtime, "Acme"), await make_key(runtime, "Other")
    tagged = []
    for n, tags in enumerate(["Finance,q1", "hr", "FINANCE", "hr,q1", "finance,Finance", "legal", "hr"]):
        resp = await upload(docs, acme, f"# Doc {n}\n".encode(), f"d{n}.md", tags=tags)
        assert resp.status == 202
        if "finance" in tags.casefold():
            tagged.append((await resp.json())["id"])
    await upload(docs, other, b"# Theirs\n", "theirs.md", tags="finance")
    for wanted in ("finance", "FINANCE", "Finance"):
        for size in (1, 2, 3):
            pages, totals = await all_offset_pages(
                docs, f"/api/documents?tag={wanted}", acme["headers"], "data", size, paged_by="page"
            )
            assert totals == {3}
            assert [d["id"] for d in pages] == tagged[::-1]
    first = await (await docs.get("/api/documents?tag=finance&pageSize=1", headers=acme["headers"])).json()
    assert len(first["data"]) == 1  # the page is full although the newest documents have other tags
    assert first["data"][0]["tags"] == ["finance", "Finance"]  # tags come back as uploaded
    for absent in ("fin", "financ", "q"):
        body = await (await docs.get(f"/api/documents?tag={absent}", headers=acme["headers"])).json()
        assert (body["total"], body["data"]) == (0, []), absent
    body = await (await docs.get("/api/documents?tag=q1&pageSize=1&page=2", headers=acme["headers"])).json()
    assert body["total"] == 2
    assert len(body["data"]) == 1


async def test_comment_search_pages_and_filters_before_the_page(docs: Any, runtime: Any) -> None:
    key = await make_key(runtime)
    first = await upload_ready(docs, key, b"# One\n\nText.\n", "one.md")
    second = await upload_ready(docs, key, b"# Two\n\nText.\n", "two.md")
    made = []
    for n in range(6):
        doc = first if n % 2 else second
        resp = await docs.post(
            "/api/comments", headers=key["headers"], json={"documentId": doc["id"], "text": f"comment {n}"}
        )
        assert resp.status == 201, await resp.text()
        made.append(await resp.json())
    for c in made[:2]:
        resp = await docs.put(f"/api/comments/{c['id']}/resolve", headers=key["headers"])
        assert resp.status == 200, await resp.text()
    for size in (1, 4, 6):
        pages, totals = await all_offset_pages(
            docs, "/api/comments/search", key["headers"], "data", size, paged_by="page"
        )
        assert [c["id"] for c in pages] == [c["id"] for c in made]  # oldest first
        assert totals == {6}
        pages, totals = await all_offset_pages(
            docs, "/api/comments/search?resolved=false", key["headers"], "data", size, paged_by="page"
        )
        assert [c["id"] for c in pages] == [c["id"] for c in made[2:]]
        assert totals == {4}
        pages, totals = await all_offset_pages(
            docs,
            f"/api/comments/search?documentId={first['id']}",
            key["headers"],
            "data",
            size,
            paged_by="page",
        )
        assert [c["id"] for c in pages] == [c["id"] for c in made[1::2]]


# ---- hub offset lists -------------------------------------------------------------------------------------


async def test_topic_and_agent_pages_cover_everything_once(hub: Any, register: Any) -> None:
    agents = [await register() for _ in range(5)]
    made = []
    for n, agent in enumerate(agents):
        resp = await hub.post(
            "/api/pact/topics", json={**TOPIC, "title": f"Paged {n}"}, headers=agent["headers"]
        )
        assert resp.status == 201, await resp.text()
        made.append((await resp.json())["id"])
    for size in (1, 2, 5):
        topics, totals = await all_offset_pages(hub, "/api/pact/topics", {}, "topics", size)
        assert [t["id"] for t in topics] == made[::-1]  # newest first
        assert totals == {5}
        listed, totals = await all_offset_pages(hub, "/api/hub/agents", {}, "agents", size)
        assert [a["agentId"] for a in listed] == [a["agentId"] for a in agents]  # oldest first
        assert totals == {5}


async def test_topic_status_filter_applies_before_the_page(hub: Any, register: Any) -> None:
    opened, _ = await open_topic(hub, register)
    agent = await register()
    for n in range(3):
        resp = await hub.post(
            "/api/pact/topics", json={**TOPIC, "title": f"Later {n}"}, headers=agent["headers"]
        )
        assert resp.status == 201
    topics, totals = await all_offset_pages(hub, "/api/pact/topics?status=open", {}, "topics", 1)
    assert [t["id"] for t in topics] == [opened]
    assert totals == {1}
    topics, totals = await all_offset_pages(hub, "/api/pact/topics?status=proposed", {}, "topics", 2)
    assert len(topics) == 3
    assert totals == {3}


# ---- keyset lists: events and poll ------------------------------------------------------------------------


async def all_event_pages(client: Any, url: str, headers: dict[str, str], limit: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    after = "0"
    for _ in range(1000):
        resp = await client.get(f"{url}?after={after}&limit={limit}", headers=headers)
        assert resp.status == 200, await resp.text()
        page = await resp.json()
        assert len(page["events"]) <= limit
        found.extend(page["events"])
        after = page["nextCursor"]
        if not page["hasMore"]:
            again = await (await client.get(f"{url}?after={after}&limit={limit}", headers=headers)).json()
            assert (again["events"], again["nextCursor"], again["hasMore"]) == ([], after, False)
            return found
    raise AssertionError("the pages never ended")


async def test_topic_event_pages_cover_every_event_once_in_order(hub: Any, register: Any) -> None:
    topic, _agents = await open_topic(hub, register, n_agents=5)
    url = f"/api/pact/{topic}/events"
    everything = await all_event_pages(hub, url, {}, 200)
    seqs = [e["sequenceNumber"] for e in everything]
    assert seqs == list(range(1, len(seqs) + 1))
    assert len(seqs) >= 5
    for limit in (1, 3, len(seqs) - 1, len(seqs)):
        assert await all_event_pages(hub, url, {}, limit) == everything


async def test_document_events_and_poll_page_with_the_section_filter_before_the_limit(
    docs: Any, runtime: Any
) -> None:
    key = await make_key(runtime)
    doc = await upload_ready(
        docs, key, b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n\n## Risks\n\nFew.\n", "plan.md"
    )
    base = f"/api/tap/{doc['id']}"
    assert (await docs.post(f"{base}/join", headers=key["headers"], json={"agentName": "Ada"})).status == 201
    sections = ["sec:plan:risks", "sec:plan:budget", "sec:plan:risks", "sec:plan:risks", "sec:plan:budget"]
    for n, section in enumerate(sections):
        resp = await docs.post(
            f"{base}/intents", headers=key["headers"], json={"sectionId": section, "goal": f"goal {n}"}
        )
        assert resp.status == 201, await resp.text()
    everything = await all_event_pages(docs, f"{base}/events", key["headers"], 200)
    for limit in (1, 2, 5):
        assert await all_event_pages(docs, f"{base}/events", key["headers"], limit) == everything
    budget = [e["sequenceNumber"] for e in everything if e["sectionId"] == "sec:plan:budget"]
    # two declarations, and the second supersedes the first (the same agent's newer intent on the section)
    assert len(budget) == 3

    since, seen = "evt_0", list[int]()
    for _ in range(10):
        resp = await docs.get(
            f"{base}/poll?since={since}&sectionId=sec:plan:budget&limit=1", headers=key["headers"]
        )
        assert resp.status == 200, await resp.text()
        poll = await resp.json()
        assert len(poll["changes"]) == (
            1 if len(seen) < len(budget) else 0
        )  # never an empty page before the end
        seen.extend(int(c["cursor"].removeprefix("evt_")) for c in poll["changes"])
        since = poll["cursor"]
        if not poll["hasMore"]:
            break
    assert seen == budget
    resp = await docs.get(f"{base}/poll?since={since}&sectionId=sec:plan:budget", headers=key["headers"])
    assert (await resp.json())["changes"] == []
    unfiltered = await (await docs.get(f"{base}/poll?limit=200", headers=key["headers"])).json()
    assert [c["cursor"] for c in unfiltered["changes"]] == [f"evt_{e['sequenceNumber']}" for e in everything]
