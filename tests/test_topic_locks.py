"""Section locks on hub topics (PACT v2.0.3 §4.3), over HTTP: what the PACT CLI's `lock` and `unlock` send,
the holder-only release, proposals refused on another agent's locked section, the 60 s TTL (a lock past it is
no lock at once; the sweep removes it and says so), leaving's release, the events (recorded as a document's
are), and two agents locking one section at once (exactly one holds it)."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select, text

from domain.consensus.models import SectionLock
from domain.kernel.clock import utcnow
from domain.kernel.context import Actor, Context
from domain.topics import locks as topic_locks
from tests.conftest import PG_ADMIN_URL
from tests.consensus_helpers import open_topic, propose, run_sweep
from tests.documents_support import make_key, upload_ready
from tests.waiting import eventually


def _lock_url(topic_id: str, section_id: str = "sec:answer") -> str:
    return f"/api/pact/{topic_id}/sections/{section_id}/lock"


async def _lock(
    hub: Any, topic_id: str, agent: dict, expect: int, section_id: str = "sec:answer", **body: Any
):
    # The PACT CLI sends {} without --ttl, {"ttlSeconds": n} with it.
    resp = await hub.post(_lock_url(topic_id, section_id), headers=agent["headers"], json=body)
    assert resp.status == expect, await resp.text()
    return await resp.json()


async def _unlock(hub: Any, topic_id: str, agent: dict, expect: int, section_id: str = "sec:answer"):
    resp = await hub.delete(_lock_url(topic_id, section_id), headers=agent["headers"])  # no body, as the CLI
    assert resp.status == expect, await resp.text()
    return await resp.json()


async def _events(hub: Any, topic_id: str, prefix: str = "pact.section.") -> list[dict[str, Any]]:
    body = await (await hub.get(f"/api/pact/{topic_id}/events", params={"limit": "200"})).json()
    return [e for e in body["events"] if e["type"].startswith(prefix)]


def _seconds_left(lock: dict[str, Any]) -> float:
    return (datetime.fromisoformat(lock["expiresAt"].replace("Z", "+00:00")) - utcnow()).total_seconds()


async def test_lock_renew_refuse_and_release(hub: Any, register: Any) -> None:
    topic_id, (ada, bob, cy) = await open_topic(hub, register)

    lock = await _lock(hub, topic_id, ada, 200)
    assert lock["sectionId"] == "sec:answer"
    assert (lock["lockedBy"], lock["lockedByName"]) == (ada["agentId"], ada["agentName"])
    assert lock["ttlSeconds"] == 60  # PACT §4.3: at most 60 s, and the default
    assert 55 < _seconds_left(lock) <= 60

    # Another agent's lock and another agent's proposal on the section: 409 naming the holder.
    conflict = await _lock(hub, topic_id, bob, 409, ttlSeconds=10)
    assert conflict["error"] == "section_locked"
    assert (conflict["lockedBy"], conflict["expiresAt"]) == (ada["agentId"], lock["expiresAt"])
    refused = await propose(hub, topic_id, bob, expect=409)
    assert (refused["error"], refused["lockedBy"]) == ("section_locked", ada["agentId"])
    # Other sections stay open, and the holder itself may propose on its section.
    await propose(hub, topic_id, bob, sectionId="sec:discussion")
    await propose(hub, topic_id, ada, newContent="Ada's answer.")

    # The holder renews with a TTL of its own; nobody else may release it.
    renewed = await _lock(hub, topic_id, ada, 200, ttlSeconds=30)
    assert renewed["ttlSeconds"] == 30
    assert 25 < _seconds_left(renewed) <= 30
    denied = await _unlock(hub, topic_id, bob, 403)
    assert (denied["error"], denied["lockedBy"]) == ("not_lock_holder", ada["agentId"])

    assert await _unlock(hub, topic_id, ada, 200) == {"sectionId": "sec:answer", "unlocked": True}
    assert (await _unlock(hub, topic_id, ada, 404))["error"] == "lock_not_found"
    # Released: the next agent locks it, and proposals of others are taken again.
    assert (await _lock(hub, topic_id, cy, 200, ttlSeconds=5))["lockedBy"] == cy["agentId"]
    await _unlock(hub, topic_id, cy, 200)
    await propose(hub, topic_id, bob, newContent="Bob's answer.")

    events = await _events(hub, topic_id)
    assert [(e["type"], e["agentId"]) for e in events] == [
        ("pact.section.locked", ada["agentId"]),
        ("pact.section.locked", ada["agentId"]),
        ("pact.section.unlocked", ada["agentId"]),
        ("pact.section.locked", cy["agentId"]),
        ("pact.section.unlocked", cy["agentId"]),
    ]
    first = events[0]
    assert first["sectionId"] == "sec:answer"
    assert (first["entityId"], first["actorKind"]) == (topic_id, "AiAgent")
    assert first["data"] == {
        "sectionId": "sec:answer",
        "lockedBy": ada["agentId"],
        "lockedByName": ada["agentName"],
        "ttlSeconds": 60,
        "expiresAt": lock["expiresAt"],
    }
    assert events[2]["data"] == {"sectionId": "sec:answer", "reason": "released"}


async def test_bad_lock_requests_name_the_problem(hub: Any, register: Any) -> None:
    topic_id, (ada, bob, _cy) = await open_topic(hub, register)
    outsider = await register()
    for ttl in (61, 0):
        bad = await _lock(hub, topic_id, ada, 400, ttlSeconds=ttl)
        assert "ttlSeconds" in bad["detail"], bad
    assert (await _lock(hub, topic_id, ada, 400, ttlSeconds="30"))["error"] == "validation_error"
    assert (await _lock(hub, topic_id, ada, 404, section_id="sec:nope"))["error"] == "section_not_found"
    unknown = "00000000-0000-4000-8000-000000000000"
    assert (await _lock(hub, unknown, ada, 404))["error"] == "topic_not_found"
    assert (await _unlock(hub, unknown, ada, 404))["error"] == "topic_not_found"
    assert (await _lock(hub, topic_id, outsider, 403))["error"] == "not_joined"
    assert (await _unlock(hub, topic_id, outsider, 403))["error"] == "not_joined"
    resp = await hub.post(_lock_url(topic_id), json={})
    assert resp.status == 401
    resp = await hub.post(_lock_url(topic_id), headers=ada["headers"])  # no body at all: the default TTL
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["ttlSeconds"] == 60
    # Nothing was written by the refusals: one lock, one event.
    assert [e["type"] for e in await _events(hub, topic_id)] == ["pact.section.locked"]
    assert (await _unlock(hub, topic_id, bob, 403))["error"] == "not_lock_holder"


async def test_a_lock_ends_at_its_ttl_and_the_sweep_says_so(
    hub: Any, register: Any, runtime: Any, clock: Any
):
    topic_id, (ada, bob, _cy) = await open_topic(hub, register)
    lock = await _lock(hub, topic_id, ada, 200, ttlSeconds=5)
    await _lock(hub, topic_id, bob, 409)
    await propose(hub, topic_id, bob, expect=409)

    clock.advance(timedelta(seconds=6))
    # Past its TTL the lock holds no more, before any sweep: others propose and unlock finds nothing.
    await propose(hub, topic_id, bob)
    assert (await _unlock(hub, topic_id, ada, 404))["error"] == "lock_not_found"
    assert await run_sweep(runtime, "documents.expire_locks") == 0  # each resource type has its own sweep
    assert await run_sweep(runtime, "topics.expire_locks") == 1
    async with runtime.db.read() as session:
        assert await session.scalar(select(func.count(SectionLock.id))) == 0
    unlocked = (await _events(hub, topic_id))[-1]
    assert unlocked["type"] == "pact.section.unlocked"
    assert (unlocked["agentId"], unlocked["actorKind"]) == (None, "System")
    assert unlocked["data"] == {"sectionId": "sec:answer", "reason": "expired", "lockedBy": ada["agentId"]}
    assert (await _lock(hub, topic_id, bob, 200))["lockedBy"] == bob["agentId"]

    # An expired lock the sweep has not reached yet is taken over by the next locker.
    clock.advance(timedelta(seconds=61))
    taken = await _lock(hub, topic_id, ada, 200)
    assert taken["lockedBy"] == ada["agentId"]
    assert await run_sweep(runtime, "topics.expire_locks") == 0
    assert lock["expiresAt"] != taken["expiresAt"]


async def test_leaving_releases_the_leavers_locks(hub: Any, register: Any) -> None:
    """DELETE /leave releases every lock the leaver holds on the topic, each with an event saying so."""
    topic_id, (ada, bob, cy) = await open_topic(hub, register)
    await _lock(hub, topic_id, ada, 200)
    await _lock(hub, topic_id, ada, 200, section_id="sec:discussion")
    await _lock(hub, topic_id, bob, 200, section_id="sec:answer:evidence")
    resp = await hub.delete(f"/api/pact/{topic_id}/leave", headers=ada["headers"])
    assert resp.status == 200, await resp.text()
    await _lock(hub, topic_id, bob, 200)
    await _lock(hub, topic_id, bob, 200, section_id="sec:discussion")
    left = [e for e in await _events(hub, topic_id) if e["data"].get("reason") == "left"]
    assert sorted(e["sectionId"] for e in left) == ["sec:answer", "sec:discussion"]
    assert {e["agentId"] for e in left} == {ada["agentId"]}
    # bob's own lock is still his
    await _lock(hub, topic_id, cy, 409, section_id="sec:answer:evidence")


async def test_topic_and_document_locks_are_recorded_alike(hub: Any, docs: Any, register: Any, runtime: Any):
    topic_id, (ada, _bob, _cy) = await open_topic(hub, register)
    key = await make_key(runtime, org="Acme", name="k")
    doc = await upload_ready(docs, key, b"# Answer\n\nText.\n", "answer.md")
    base = f"/api/pact/{doc['id']}"
    resp = await docs.post(f"{base}/join", headers=key["headers"], json={"agentName": "Dee"})
    assert resp.status == 201, await resp.text()
    # The same section id locked on a topic and on a document: two locks, neither in the other's way.
    topic_lock = await _lock(hub, topic_id, ada, 200, ttlSeconds=20)
    resp = await docs.post(
        f"{base}/sections/sec:answer/lock", headers=key["headers"], json={"ttlSeconds": 20}
    )
    assert resp.status == 200, await resp.text()
    doc_lock = await resp.json()
    assert set(doc_lock) == set(topic_lock)
    await _unlock(hub, topic_id, ada, 200)
    resp = await docs.delete(f"{base}/sections/sec:answer/lock", headers=key["headers"])
    assert await resp.json() == {"sectionId": "sec:answer", "unlocked": True}

    resp = await docs.get(f"{base}/events?after=0&limit=200", headers=key["headers"])
    doc_events = [e for e in (await resp.json())["events"] if e["type"].startswith("pact.section.")]
    topic_events = await _events(hub, topic_id)
    assert [e["type"] for e in doc_events] == [e["type"] for e in topic_events]
    for d, t in zip(doc_events, topic_events, strict=True):
        assert set(d["data"]) == set(t["data"])
        assert (
            (d["sectionId"], d["actorKind"]) == (t["sectionId"], t["actorKind"]) == ("sec:answer", "AiAgent")
        )
    assert (doc_events[0]["entityType"], topic_events[0]["entityType"]) == ("pact-document", "pact-fact")


async def test_agents_locking_one_section_at_once_leave_one_holder(hub: Any, register: Any, runtime: Any):
    topic_id, agents = await open_topic(hub, register, n_agents=6)
    replies = await asyncio.gather(
        *(hub.post(_lock_url(topic_id), headers=a["headers"], json={"ttlSeconds": 30}) for a in agents)
    )
    bodies = [await r.json() for r in replies]
    assert Counter(r.status for r in replies) == {200: 1, 409: 5}
    [winner] = [b["lockedBy"] for r, b in zip(replies, bodies, strict=True) if r.status == 200]
    assert {b["lockedBy"] for b in bodies} == {winner}  # every refusal names the one holder
    async with runtime.db.read() as session:
        assert await session.scalar(select(func.count(SectionLock.id))) == 1
    assert [e["agentId"] for e in await _events(hub, topic_id)] == [winner]


async def _waiting_on_locks(runtime: Any) -> int:
    async with runtime.db.read() as session:
        return int(
            await session.scalar(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock'"
                )
            )
            or 0
        )


@pytest.mark.skipif(not PG_ADMIN_URL, reason="PostgreSQL only: SQLite's writers never run side by side")
async def test_lockers_released_together_on_postgresql_leave_one_holder(
    hub: Any, register: Any, runtime: Any
):
    """Every locker is inside its transaction at once, queued on the topic's row lock, when the row is let go:
    they really race (not one after another as the event loop happened to send them)."""
    from domain.topics.models import Topic

    topic_id, agents = await open_topic(hub, register, n_agents=6)
    async with runtime.db.transaction() as holder:
        await holder.execute(select(Topic.id).where(Topic.id == topic_id).with_for_update())
        tasks = [
            asyncio.create_task(hub.post(_lock_url(topic_id), headers=a["headers"], json={})) for a in agents
        ]
        await eventually(lambda: _at_least(runtime, len(agents)))
    replies = await asyncio.gather(*tasks)
    assert Counter(r.status for r in replies) == {200: 1, 409: 5}
    async with runtime.db.read() as session:
        assert await session.scalar(select(func.count(SectionLock.id))) == 1
    assert len(await _events(hub, topic_id)) == 1


async def _at_least(runtime: Any, n: int) -> bool:
    return await _waiting_on_locks(runtime) >= n


@pytest.mark.skipif(not PG_ADMIN_URL, reason="PostgreSQL only: SQLite's writers never run side by side")
async def test_a_lock_committed_while_a_proposal_waits_refuses_it(hub: Any, register: Any, runtime: Any):
    """A proposal queued on the topic's row lock behind a locker reads the lock that locker committed (a row
    read in the statement that waited would be the one of before the wait)."""
    topic_id, (ada, bob, _cy) = await open_topic(hub, register)
    ctx = Context(actor=Actor(ada["agentId"], ada["agentName"], "", kind="agent"))
    async with runtime.db.transaction() as session:
        await topic_locks.lock_section(session, ctx, topic_id, section_id="sec:answer", ttl_seconds=30)
        body = {"sectionId": "sec:answer", "newContent": "Meanwhile.", "summary": "Race the lock"}
        proposal = asyncio.create_task(
            hub.post(f"/api/pact/{topic_id}/proposals", headers=bob["headers"], json=body)
        )
        await eventually(lambda: _at_least(runtime, 1))
    resp = await proposal
    assert resp.status == 409, await resp.text()
    assert (await resp.json())["lockedBy"] == ada["agentId"]
