"""The hub's read cache: own writes show at once; other processes' writes within the configured bound."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update

from domain.kernel.db import Database
from domain.topics.models import Topic
from tests.waiting import eventually


async def test_other_processes_writes_show_within_the_bound(hub: Any, register: Any, runtime: Any):
    agent = await register()
    resp = await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={"title": "Cached topic", "content": "# Answer\n\nOld text.\n", "tier": "empirical"},
    )
    topic_id = (await resp.json())["id"]
    assert "Old text." in (await (await hub.get(f"/api/pact/{topic_id}/content")).json())["content"]

    other = Database(runtime.settings.db_url)  # another process's connection: this one's cache is not told
    try:
        async with other.transaction() as session:
            await session.execute(
                update(Topic).where(Topic.id == topic_id).values(content="# Answer\n\nNew text.\n", version=2)
            )
    finally:
        await other.dispose()

    async def fresh() -> bool:
        body = await (await hub.get(f"/api/pact/{topic_id}/content")).json()
        return body["version"] == 2 and "New text." in body["content"]

    await eventually(fresh, timeout=runtime.settings.read_cache_seconds + 5)


async def test_own_writes_show_at_once(hub: Any, register: Any):
    agent = await register()
    listed = await (await hub.get("/api/pact/topics")).json()
    assert listed["total"] == 0
    resp = await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={"title": "Fresh topic", "content": "# Answer\n\nText.\n", "tier": "empirical"},
    )
    assert resp.status == 201
    listed = await (await hub.get("/api/pact/topics")).json()
    assert listed["total"] == 1


async def test_requests_that_miss_together_share_one_read(hub: Any, register: Any, runtime: Any):
    import asyncio

    from sqlalchemy import event

    await runtime.relay.stop()  # its timer's polls would count too
    agent = await register()
    statements: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            statements.append(statement)

    async def new_topic(n: int) -> None:  # a commit: every cached entry is out of date
        body = {"title": f"Topic {n}", "content": "# Answer\n\nText.\n", "tier": "empirical"}
        assert (await hub.post("/api/pact/topics", headers=agent["headers"], json=body)).status == 201

    event.listen(runtime.db.engine.sync_engine, "before_cursor_execute", count)
    try:
        await new_topic(1)
        statements.clear()
        assert (await hub.get("/api/pact/topics")).status == 200
        one = len(statements)
        await new_topic(2)
        statements.clear()
        answers = await asyncio.gather(*(hub.get("/api/pact/topics") for _ in range(20)))
        assert [r.status for r in answers] == [200] * 20
        assert {(await r.json())["total"] for r in answers} == {2}
        assert len(statements) == one  # twenty requests, the statements of one
    finally:
        event.remove(runtime.db.engine.sync_engine, "before_cursor_execute", count)


async def test_idle_timers_leave_cached_reads_cached(hub: Any, register: Any, runtime: Any):
    """A relay pass and a sweep that changed nothing commit only bookkeeping: every few seconds, they must
    not empty the caches of the machine."""
    from sqlalchemy import event

    from domain import wiring
    from domain.kernel import sweeps

    agent = await register()
    body = {"title": "Kept", "content": "# Answer\n\nText.\n", "tier": "empirical"}
    assert (await hub.post("/api/pact/topics", headers=agent["headers"], json=body)).status == 201
    assert (await hub.get("/api/pact/topics")).status == 200  # cached now
    reads: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if "FROM topics" in statement:
            reads.append(statement)

    event.listen(runtime.db.engine.sync_engine, "before_cursor_execute", count)
    try:
        await runtime.relay.run_once()
        idle = next(s for s in wiring.SWEEPS if s.name == "documents.expire_locks")
        assert await sweeps.run(runtime.db, idle, "test") == 0
        assert (await hub.get("/api/pact/topics")).status == 200
        assert reads == []  # served from the cache
        second = {**body, "title": "Second"}
        assert (await hub.post("/api/pact/topics", headers=agent["headers"], json=second)).status == 201
        assert (await (await hub.get("/api/pact/topics")).json())["total"] == 2  # a real write still shows
    finally:
        event.remove(runtime.db.engine.sync_engine, "before_cursor_execute", count)
