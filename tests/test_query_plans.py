"""The list endpoints read an index in their order: every SELECT a deep-page request runs is captured off
the engine and EXPLAINed on the same database (EXPLAIN QUERY PLAN on SQLite; EXPLAIN on PostgreSQL with
sequential scans and sorts priced out, so a tiny test table still shows the index a large one would use),
and none may read a whole table or sort rows. Not timed: bench/deep_pages.py measures the cost at scale.
Also: the topic standing a merge reads counts distinct authors by one bounded index read per author."""

from __future__ import annotations

from typing import Any

import pytest

from tests.axiom_helpers import staff_headers
from tests.conftest import PG_ADMIN_URL
from tests.consensus_helpers import open_topic, propose, vote
from tests.documents_support import make_key, upload
from tests.query_plans import bad_steps, captured, explain, seeks_on

TOPIC = {"tier": "empirical", "content": "# Answer\n\nYes.\n\n## Evidence\n\nSome.\n"}


async def assert_index_served(
    runtime: Any, client: Any, url: str, headers: dict[str, str], table: str, *, seek: str | None = None
) -> None:
    """No statement reading `table` scans it or sorts; with `seek`, the page's index range starts at the
    cursor on that column."""
    with captured(runtime.db.engine) as seen:
        resp = await client.get(url, headers=headers)
        assert resp.status == 200, (url, await resp.text())
    # The statements reading the list's own table (its page and its total); what they then load per row
    # of the page (a topic's dependencies, a proposal's votes) is bounded by the page size.
    selects = [(s, p) for s, p in seen if s.lstrip().upper().startswith("SELECT") and f"\nFROM {table} " in s]
    assert selects, (url, "no statement read", table)
    seeking = []
    for statement, parameters in selects:
        plan = await explain(runtime.db, statement, parameters)
        assert not bad_steps(runtime.db, plan), (url, statement, plan)
        seeking.append(seek is None or seeks_on(runtime.db, plan, seek))
    assert any(seeking), (url, f"no index range starts at the cursor on {seek}")


async def test_hub_lists_read_their_index_in_order(hub: Any, register: Any, runtime: Any) -> None:
    agents = [await register() for _ in range(3)]
    topics = []
    for n, agent in enumerate(agents):
        resp = await hub.post(
            "/api/pact/topics", json={**TOPIC, "title": f"Plan topic {n}"}, headers=agent["headers"]
        )
        assert resp.status == 201, await resp.text()
        topics.append((await resp.json())["id"])
    for agent in agents[1:]:
        assert (await hub.post(f"/api/pact/{topics[0]}/join", headers=agent["headers"])).status in (200, 201)
    audit = await hub.get("/api/audit/me?limit=1", headers=agents[0]["headers"])
    cursor = (await audit.json())["next_cursor"]
    assert cursor

    await assert_index_served(
        runtime, hub, f"/api/pact/{topics[0]}/events?after=1&limit=1", {}, "events", seek="seq"
    )
    await assert_index_served(
        runtime,
        hub,
        f"/api/audit/me?limit=1&cursor={cursor}",
        agents[0]["headers"],
        "audit_entries",
        seek="created_at",
    )
    await assert_index_served(
        runtime, hub, "/api/work/events?after=1&limit=1", agents[0]["headers"], "events", seek="seq"
    )
    await assert_index_served(runtime, hub, "/api/pact/topics?limit=1&offset=1", {}, "topics")
    await assert_index_served(runtime, hub, "/api/pact/topics?status=proposed&limit=1&offset=1", {}, "topics")
    await assert_index_served(runtime, hub, "/api/hub/agents?limit=1&offset=1", {}, "agents")
    await assert_index_served(
        runtime, hub, f"/api/pact/{topics[0]}/proposals?limit=1&offset=1", {}, "proposals"
    )
    staff = await staff_headers(runtime)
    for url, table in [
        ("/api/review/proposals?status=objected&offset=1", "proposals"),
        ("/api/review/escalations?status=open&offset=1", "escalations"),
        ("/api/review/work?status=deferred&offset=1", "work_submissions"),
        ("/api/review/proposals?status=all&offset=1", "proposals"),
        ("/api/review/escalations?status=all&offset=1", "escalations"),
        ("/api/review/escalations?status=answered&offset=1", "escalations"),
        ("/api/review/escalations?status=decided&priority=urgent&offset=1", "escalations"),
        ("/api/review/work?status=all&offset=1", "work_submissions"),
        ("/api/work/defects?status=open", "work_defects"),
    ]:
        await assert_index_served(runtime, hub, url, staff, table)


async def test_document_lists_read_their_index_in_order(docs: Any, runtime: Any) -> None:
    key = await make_key(runtime)
    ids = []
    for n in range(3):
        resp = await upload(
            docs, key, f"# Doc {n}\n\n## Budget\n\nText.\n".encode(), f"d{n}.md", tags="Finance,q1"
        )
        assert resp.status == 202
        ids.append((await resp.json())["id"])
    resp = await docs.post("/api/comments", headers=key["headers"], json={"documentId": ids[0], "text": "hm"})
    assert resp.status == 201, await resp.text()
    h = key["headers"]
    await assert_index_served(runtime, docs, "/api/documents?page=2&pageSize=1", h, "documents")
    await assert_index_served(
        runtime, docs, "/api/documents?tag=finance&page=2&pageSize=1", h, "document_tags"
    )
    await assert_index_served(runtime, docs, "/api/comments/search?page=1&pageSize=1", h, "document_comments")
    await assert_index_served(
        runtime, docs, f"/api/comments/search?documentId={ids[0]}&page=1&pageSize=1", h, "document_comments"
    )
    await assert_index_served(
        runtime, docs, f"/api/tap/{ids[0]}/events?after=1&limit=1", h, "events", seek="seq"
    )
    await assert_index_served(
        runtime,
        docs,
        f"/api/tap/{ids[0]}/poll?since=evt_1&sectionId=sec:doc-0:budget&limit=1",
        h,
        "events",
        seek="seq",
    )


@pytest.mark.skipif(not PG_ADMIN_URL, reason="PostgreSQL only: SQLite's plans show no Limit step to check")
async def test_a_topics_distinct_authors_are_counted_by_skip_scan(
    hub: Any, register: Any, runtime: Any
) -> None:
    """The standing a merge reads counts the topic's distinct authors one index descent per author: each
    descent an index read in author order that stops at its first row (a Limit). Written as min(),
    PostgreSQL took that shape only when its statistics told it to, and without them (a new deployment,
    autovacuum off) read every proposal of the topic for the first author; as on the list endpoints, the
    plan is read with scans and sorts priced out, so the tests' tiny tables show what a large one gets."""
    topic_id, (author, first, second) = await open_topic(hub, register)
    for _ in range(3):
        made = await propose(hub, topic_id, author)
        await vote(hub, topic_id, made["id"], first, "approve")
        with captured(runtime.db.engine) as seen:
            assert (await vote(hub, topic_id, made["id"], second, "approve"))["status"] == "merged"
    standing = [(s, p) for s, p in seen if "WITH RECURSIVE authors" in s]
    assert len(standing) == 1, [s for s, _ in seen]
    plan = await explain(runtime.db, *standing[0])
    start = next(i for i, line in enumerate(plan) if line.strip() == "CTE authors")
    indent = len(plan[start]) - len(plan[start].lstrip())
    end = next(i for i in range(start + 1, len(plan)) if len(plan[i]) - len(plan[i].lstrip()) <= indent)
    cte = [line.strip() for line in plan[start:end]]
    reads = [i for i, line in enumerate(cte) if "Scan using" in line and " on proposals" in line]
    assert reads, "\n".join(plan)
    assert all(cte[i - 1].startswith(("Limit", "->  Limit")) for i in reads), "\n".join(plan)
