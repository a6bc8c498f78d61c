"""Hot anonymous reads (issue 35): a GET of a target the read cache has learnt is answered before routing
(web/kernel/middleware.py `serve_hot_reads`) with exactly what the route answers, counted and logged alike,
and never with an entry a commit has made stale."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest

from tests.test_observability import scrape, value
from web.kernel.appkeys import READ_CACHE

CONTENT_ROUTE = "/api/pact/{topicId}/content"
UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


async def _topic(hub: Any, register: Any, title: str = "Hot topic") -> str:
    agent = await register()
    resp = await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={"title": title, "content": "# Answer\n\nThe text.\n", "tier": "empirical"},
    )
    assert resp.status == 201, await resp.text()
    return str((await resp.json())["id"])


async def test_a_learnt_read_answers_the_routes_bytes_headers_metrics_and_access_line(
    hub: Any, register: Any, caplog: pytest.LogCaptureFixture
) -> None:
    topic_id = await _topic(hub, register)
    path = f"/api/pact/{topic_id}/content"
    before = await scrape(hub)
    with caplog.at_level(logging.INFO, logger="concord.access"):
        answers = []
        for n in range(4):
            resp = await hub.get(path, headers={"X-Request-Id": f"hot-{n}"})
            answers.append(
                (resp.status, resp.headers["Content-Type"], resp.headers["X-Request-Id"], await resp.read())
            )
        unnamed = await hub.get(path)
        unnamed_body = await unnamed.read()
    # The first was routed (and taught the cache its target); the later ones were answered before routing.
    assert hub.server.app[READ_CACHE].hot(path) is not None
    assert [a[0] for a in answers] == [200] * 4
    assert {a[1] for a in answers} == {"application/json"}
    assert [a[2] for a in answers] == [f"hot-{n}" for n in range(4)]
    assert {a[3] for a in answers} == {unnamed_body}
    assert UUID4.match(unnamed.headers["X-Request-Id"])
    assert b'"content":"# Answer\\n\\nThe text.\\n"' in unnamed_body

    after = await scrape(hub)
    labels = {"app": "hub", "method": "GET", "route": CONTENT_ROUTE, "status": "200"}
    counted = value(after, "concord_http_requests_total", **labels)
    assert counted - value(before, "concord_http_requests_total", **labels) == 5
    logged = [
        r for r in caplog.records if r.name == "concord.access" and getattr(r, "route", "") == CONTENT_ROUTE
    ]
    assert [getattr(r, "request_id", None) for r in logged][:4] == [f"hot-{n}" for n in range(4)]
    assert len(logged) == 5
    assert all(getattr(r, "status", None) == 200 for r in logged)
    assert all(getattr(r, "bytes", None) == len(unnamed_body) for r in logged)
    assert all(getattr(r, "client", None) == "127.0.0.1" for r in logged)


async def test_a_commit_makes_a_learnt_read_take_the_route_again(hub: Any, register: Any) -> None:
    await _topic(hub, register, "First")
    for _ in range(3):
        listed = await (await hub.get("/api/pact/topics?limit=5")).json()
        assert [t["title"] for t in listed["topics"]] == ["First"]
    await _topic(hub, register, "Second")  # a commit in this process: the entry is stale at once
    listed = await (await hub.get("/api/pact/topics?limit=5")).json()
    assert sorted(t["title"] for t in listed["topics"]) == ["First", "Second"]
    assert listed["total"] == 2


async def test_each_target_answers_its_own_entry_and_bad_input_is_never_learnt(
    hub: Any, register: Any
) -> None:
    await _topic(hub, register, "One")
    await _topic(hub, register, "Two")
    for _ in range(3):
        one = await (await hub.get("/api/pact/topics?limit=1")).json()
        two = await (await hub.get("/api/pact/topics?limit=2")).json()
        assert (len(one["topics"]), one["limit"]) == (1, 1)
        assert (len(two["topics"]), two["limit"]) == (2, 2)
    for _ in range(3):
        resp = await hub.get("/api/pact/topics?limit=abc")
        assert resp.status == 400
        assert "limit" in (await resp.json())["detail"]
    missing = "/api/pact/00000000-0000-4000-8000-000000000000/content"
    for _ in range(3):
        assert (await hub.get(missing)).status == 404
    assert hub.server.app[READ_CACHE].hot("/api/pact/topics?limit=abc") is None
    assert hub.server.app[READ_CACHE].hot(missing) is None


async def test_a_write_to_a_learnt_target_is_routed(hub: Any, register: Any) -> None:
    topic_id = await _topic(hub, register)
    for _ in range(2):
        assert (await hub.get("/api/pact/topics")).status == 200
    agent = await register()
    resp = await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={"title": "By POST", "content": "# Answer\n\nMore.\n", "tier": "empirical"},
    )
    assert resp.status == 201, await resp.text()  # the same target, another method: the route answers
    resp = await hub.delete(f"/api/pact/{topic_id}/content")
    assert resp.status == 405
