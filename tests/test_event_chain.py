"""The event log's integrity (PACT v2.0.3 §6.4): every event carries `prev_hash`, the hash of its stream's
previous event exactly as the events API serves it, which a client recomputes from the API's output alone;
the chain holds under many concurrent writers; signed `pact.log.root` events commit to it (on demand and
daily); and `concord events verify` finds an edited, a removed and a reordered event."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from datetime import timedelta
from typing import Any

import asyncpg
import base58
import pytest
import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import delete, event, select, update

from domain.kernel import ledger, log_roots
from domain.kernel.event_record import canonical
from domain.kernel.models import Event
from tests.conftest import PG_ADMIN_URL
from tests.consensus_helpers import open_topic, propose, run_sweep, vote
from tests.documents_support import make_key, upload_ready
from tests.processes import concord
from tests.test_event_fields import all_events
from tests.waiting import eventually


def client_hash(event: dict[str, Any]) -> str:
    """What any client computes, with nothing of Concord's: unpadded base64url SHA-256 of RFC 8785 JSON."""
    return base64.urlsafe_b64encode(hashlib.sha256(rfc8785.dumps(event)).digest()).rstrip(b"=").decode()


def assert_chained(events: list[dict[str, Any]]) -> None:
    assert [e["sequenceNumber"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["prev_hash"] == "GENESIS"
    for before, after in zip(events, events[1:], strict=False):
        assert after["prev_hash"] == client_hash(before), after["sequenceNumber"]


def public_key(did_key: str) -> Ed25519PublicKey:
    """A did:key's Ed25519 key, decoded here independently (multibase z = base58btc, multicodec 0xed01)."""
    assert did_key.startswith("did:key:z")
    raw = base58.b58decode(did_key[len("did:key:z") :])
    assert raw[:2] == b"\xed\x01"
    return Ed25519PublicKey.from_public_bytes(raw[2:])


def b64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


async def test_a_client_recomputes_the_chain_of_a_topic_and_of_a_document(hub, docs, register, runtime):
    topic_id, (author, first, second) = await open_topic(hub, register)
    proposal = await propose(hub, topic_id, author)
    await vote(hub, topic_id, proposal["id"], first, "approve")
    await vote(hub, topic_id, proposal["id"], second, "approve")
    events = await all_events(hub, f"/api/pact/{topic_id}/events")
    assert len(events) > 6
    assert_chained(events)

    key = await make_key(runtime)
    doc = await upload_ready(docs, key, b"# Plan\n\n## Budget\n\nMoney.\n", "plan.md")
    resp = await docs.post(f"/api/tap/{doc['id']}/join", headers=key["headers"], json={"agentName": "a"})
    assert resp.status == 201
    resp = await docs.post(f"/api/tap/{doc['id']}/escalate", headers=key["headers"], json={"message": "?"})
    assert resp.status == 201
    events = await all_events(docs, f"/api/tap/{doc['id']}/events", key["headers"])
    assert len(events) >= 3
    assert_chained(events)
    # poll's changes are the same records plus three names: without them, the same hashes
    resp = await docs.get(f"/api/tap/{doc['id']}/poll", headers=key["headers"])
    changes = (await resp.json())["changes"]
    records = [{k: v for k, v in c.items() if k not in ("agent", "section", "cursor")} for c in changes]
    assert records == events


async def test_the_chain_holds_under_a_hundred_concurrent_writers(hub, register, settings, monkeypatch):
    """A hundred agents join one topic and escalate on it at once, over HTTP: the events come out 1..N,
    each linked to the one before, and `concord events verify` agrees."""
    monkeypatch.setattr(settings, "rate_limit_register", 1000)
    topic_id, _agents = await open_topic(hub, register)
    writers = await asyncio.gather(*(register() for _ in range(100)))

    async def write(agent: dict[str, Any]) -> None:
        resp = await hub.post(f"/api/pact/{topic_id}/join", headers=agent["headers"])
        assert resp.status == 200, await resp.text()
        resp = await hub.post(
            f"/api/pact/{topic_id}/escalate", headers=agent["headers"], json={"message": "q"}
        )
        assert resp.status == 201, await resp.text()

    await asyncio.gather(*(write(a) for a in writers))
    events = await all_events(hub, f"/api/pact/{topic_id}/events")
    types = [e["type"] for e in events]
    assert types.count("pact.agent.joined") >= 100
    assert types.count("pact.escalation.created") == 100
    assert_chained(events)
    code, out, err = await concord("events", "verify", f"topic:{topic_id}")
    assert code == 0, err
    report = json.loads(out)
    assert report["intact"] is True
    assert report["events"] == len(events)


async def _topic_with_events(hub: Any, register: Any) -> tuple[str, list[dict[str, Any]]]:
    topic_id, (author, first, _second) = await open_topic(hub, register)
    proposal = await propose(hub, topic_id, author)
    await vote(hub, topic_id, proposal["id"], first, "approve")
    events = await all_events(hub, f"/api/pact/{topic_id}/events")
    assert len(events) >= 6
    return topic_id, events


async def test_verify_names_an_edited_a_removed_and_a_reordered_event(
    hub, register, runtime, settings, monkeypatch
):
    monkeypatch.setattr(settings, "rate_limit_register", 1000)
    intact, _ = await _topic_with_events(hub, register)
    edited, _ = await _topic_with_events(hub, register)
    removed, _ = await _topic_with_events(hub, register)
    reordered, _ = await _topic_with_events(hub, register)
    edited_last, events = await _topic_with_events(hub, register)
    removed_last, _ = await _topic_with_events(hub, register)
    last = len(events)
    async with runtime.db.transaction() as session:

        def event(topic: str, seq: int) -> Any:
            return (Event.stream == f"topic:{topic}") & (Event.seq == seq)

        await session.execute(update(Event).where(event(edited, 3)).values(data={"title": "rewritten"}))
        await session.execute(delete(Event).where(event(removed, 3)))
        # 3 and 4 swap places (through a free number: (stream, seq) is unique)
        await session.execute(update(Event).where(event(reordered, 3)).values(seq=-1))
        await session.execute(update(Event).where(event(reordered, 4)).values(seq=3))
        await session.execute(update(Event).where(event(reordered, -1)).values(seq=4))
        await session.execute(update(Event).where(event(edited_last, last)).values(actor_name="someone else"))
        await session.execute(delete(Event).where(event(removed_last, last)))

    code, out, err = await concord(
        "events", "verify", intact, f"topic:{edited}", removed, reordered, edited_last, removed_last
    )
    assert code == 1, (out, err)
    reports = {r["stream"]: r for r in map(json.loads, out.splitlines())}
    assert reports[f"topic:{intact}"]["intact"] is True
    assert reports[f"topic:{intact}"]["firstBreak"] is None
    breaks = {
        stream.removeprefix("topic:"): (r["firstBreak"]["sequenceNumber"], r["firstBreak"]["reason"])
        for stream, r in reports.items()
        if not r["intact"]
    }
    assert breaks[edited][0] == 4
    assert "event 3 was changed" in breaks[edited][1]
    assert breaks[removed] == (3, "event 3 is missing: the sequence goes from 2 to 4")
    assert breaks[reordered][0] == 3
    assert "reordered" in breaks[reordered][1]
    assert breaks[edited_last][0] == last
    assert f"event {last} was changed" in breaks[edited_last][1]
    assert breaks[removed_last] == (
        last,
        f"event {last} is missing: the stream's counter says {last} events, but they end at {last - 1}",
    )
    for topic in (edited, removed, reordered, edited_last, removed_last):
        assert f"topic:{topic}: the chain breaks at event" in err

    code, _out, err = await concord("events", "verify", "no-such-resource")
    assert code == 2
    assert "no event stream" in err


async def test_a_signed_root_commits_to_the_chain_and_verifies_with_the_published_key(hub, register, runtime):
    topic_id, events = await _topic_with_events(hub, register)
    code, out, err = await concord("events", "root", f"topic:{topic_id}")
    assert code == 0, err
    root = json.loads(out)
    after = await all_events(hub, f"/api/pact/{topic_id}/events")
    assert after[-1] == root  # as the events API serves it
    assert root["eventType"] == "pact.log.root"
    assert root["actorKind"] == "System"
    data = root["data"]
    assert json.loads(root["payloadJson"]) == data
    assert data["resource_id"] == topic_id
    assert (data["window_start_seq"], data["window_end_seq"]) == (1, len(events))
    assert data["window_end_hash"] == client_hash(events[-1]) == root["prev_hash"]
    assert data["signing_key"] == log_roots.signing_key_id()
    signed = {k: data[k] for k in ("resource_id", "window_start_seq", "window_end_seq", "window_end_hash")}
    public_key(data["signing_key"]).verify(b64(data["signature"]), rfc8785.dumps(signed))
    assert_chained(after)

    code, _out, err = await concord("events", "root", topic_id)  # nothing new since: no second root
    assert code == 0
    assert "nothing to sign" in err

    code, out, err = await concord("events", "verify", topic_id)
    assert code == 0, err
    assert json.loads(out)["roots"] == 1


async def test_a_forged_root_is_a_break(hub, register, runtime):
    topic_id, _events = await _topic_with_events(hub, register)
    code, out, err = await concord("events", "root", topic_id)
    assert code == 0, err
    seq = json.loads(out)["sequenceNumber"]
    async with runtime.db.transaction() as session:
        row = await session.scalar(select(Event).where(Event.stream == f"topic:{topic_id}", Event.seq == seq))
        assert row is not None
        forged = {**row.data, "window_end_seq": row.data["window_end_seq"] - 1}
        await session.execute(update(Event).where(Event.id == row.id).values(data=forged))
    code, out, err = await concord("events", "verify", topic_id)
    assert code == 1
    assert json.loads(out)["firstBreak"]["sequenceNumber"] == seq
    assert "signed root does not hold" in err


async def test_the_daily_sweep_signs_streams_with_new_events_once_their_window_is_old_enough(
    hub, register, runtime, clock
):
    topic_id, events = await _topic_with_events(hub, register)
    quiet_id, _quiet = await _topic_with_events(hub, register)
    assert await run_sweep(runtime, "events.sign_log_roots") == 0  # the windows opened just now
    clock.advance(timedelta(hours=25))
    assert await run_sweep(runtime, "events.sign_log_roots") == 2
    assert await run_sweep(runtime, "events.sign_log_roots") == 0  # nothing new since
    first_root = (await all_events(hub, f"/api/pact/{topic_id}/events"))[-1]
    assert first_root["type"] == "pact.log.root"
    assert first_root["data"]["window_end_seq"] == len(events)

    newcomer = await register()
    resp = await hub.post(f"/api/pact/{topic_id}/join", headers=newcomer["headers"])
    assert resp.status == 200
    clock.advance(timedelta(hours=25))
    assert await run_sweep(runtime, "events.sign_log_roots") == 1  # the quiet topic gets none
    after = await all_events(hub, f"/api/pact/{topic_id}/events")
    second_root = after[-1]
    assert second_root["type"] == "pact.log.root"
    assert second_root["data"]["window_start_seq"] == first_root["sequenceNumber"]
    assert second_root["data"]["window_end_seq"] == second_root["sequenceNumber"] - 1
    assert_chained(after)
    code, out, err = await concord("events", "verify", "--all")
    assert code == 0, err
    reports = {r["stream"]: r for r in map(json.loads, out.splitlines())}
    assert reports[f"topic:{topic_id}"]["roots"] == 2
    assert reports[f"topic:{quiet_id}"]["roots"] == 1


async def test_the_chain_holds_when_proposals_votes_and_escalations_race_on_one_topic(hub, register):
    """Proposals and votes number their events from the stream's counter as the statement that locked the
    topic read it (no reservation first, on PostgreSQL); escalations reserve as usual. Raced on one topic,
    every write succeeds or is refused for its own reason, and the chain stays exact."""
    topic_id, agents = await open_topic(hub, register, n_agents=6)

    async def escalate(agent: dict[str, Any]) -> None:
        resp = await hub.post(
            f"/api/pact/{topic_id}/escalate", headers=agent["headers"], json={"message": "q"}
        )
        assert resp.status == 201, await resp.text()

    async def propose_one(agent: dict[str, Any], n: int) -> dict[str, Any]:
        return await propose(hub, topic_id, agent, newContent=f"Answer {n}.", summary=f"Try {n}")

    made = await asyncio.gather(
        *(propose_one(a, n) for n, a in enumerate(agents)), *(escalate(a) for a in agents)
    )
    proposals = [p for p in made if p is not None]
    assert len(proposals) == len(agents)

    async def approve(proposal: dict[str, Any], voter: dict[str, Any]) -> None:
        url = f"/api/pact/{topic_id}/proposals/{proposal['id']}/approve"
        resp = await hub.post(url, headers=voter["headers"])
        # the first merge on the section supersedes the others, whose later votes are refused
        assert resp.status in (200, 409), await resp.text()

    voters = [(p, agents[(i + k) % len(agents)]) for i, p in enumerate(proposals) for k in (1, 2)]
    await asyncio.gather(*(approve(p, v) for p, v in voters), *(escalate(a) for a in agents))
    events = await all_events(hub, f"/api/pact/{topic_id}/events")
    types = [e["type"] for e in events]
    assert types.count("pact.proposal.created") == len(agents)
    assert types.count("pact.proposal.merged") == 1
    assert types.count("pact.escalation.created") == 2 * len(agents)
    assert_chained(events)
    code, out, err = await concord("events", "verify", f"topic:{topic_id}")
    assert code == 0, err
    assert json.loads(out)["intact"] is True


@pytest.mark.skipif(not PG_ADMIN_URL, reason="PostgreSQL only: the counter read without a reservation")
async def test_a_write_whose_counter_read_went_stale_reserves_and_chains_exactly(hub, register, runtime):
    """A proposal, then a merging vote, wait for the topic's lock, held elsewhere: the vote gets it second,
    having read the stream's counter before the proposal's commit, so its optimistic write (events, audit,
    ledger entries and two wallets) finds the counter moved, writes nothing, and reserves as a write did
    before: exactly one reservation, both writes in once, the chain exact, the ledger balanced."""
    topic_id, (author, first, second) = await open_topic(hub, register)
    pending = await propose(hub, topic_id, author)
    await vote(hub, topic_id, pending["id"], first, "approve")
    engine = runtime.db.engine.sync_engine
    reservations: list[str] = []

    def on_execute(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.startswith("INSERT INTO event_streams"):
            reservations.append(statement)

    event.listen(engine, "before_cursor_execute", on_execute)
    dsn = runtime.settings.db_url.replace("postgresql+asyncpg://", "postgresql://")
    holder = await asyncpg.connect(dsn)
    # Watched from a connection of its own: inside the holder's transaction, pg_stat_activity is the snapshot
    # of its first read until the transaction ends.
    watcher = await asyncpg.connect(dsn)

    def waiting(n: int) -> Any:
        async def check() -> bool:
            found = await watcher.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND wait_event_type = 'Lock' AND application_name = 'concord'"
            )
            return int(found) == n

        return check

    try:
        lock = holder.transaction()
        await lock.start()
        await holder.execute("SELECT 1 FROM topics WHERE id = $1 FOR UPDATE", topic_id)
        rival = asyncio.ensure_future(
            propose(hub, topic_id, first, newContent="Another answer.", summary="Rival")
        )
        await eventually(waiting(1))
        merge = asyncio.ensure_future(vote(hub, topic_id, pending["id"], second, "approve"))
        await eventually(waiting(2))
        await lock.commit()
        made, merged = await rival, await merge
    finally:
        await holder.close()
        await watcher.close()
        event.remove(engine, "before_cursor_execute", on_execute)
    assert merged["status"] == "merged"
    assert len(reservations) == 1
    one = await (await hub.get(f"/api/pact/{topic_id}/proposals/{made['id']}")).json()
    assert one["status"] == "superseded"  # the merge, second, settled the rival made before it
    events = await all_events(hub, f"/api/pact/{topic_id}/events")
    types = [e["type"] for e in events]
    assert types.count("pact.proposal.created") == 2
    assert types.count("pact.proposal.vote.approve") == 2
    assert types.count("pact.proposal.merged") == 1
    assert types.count("pact.proposal.superseded") == 1
    assert_chained(events)
    async with runtime.db.read() as session:
        assert await ledger.total_supply(session) == 0


def test_the_fast_canonical_encoding_is_rfc_8785s():
    """Event records are encoded by the standard library's JSON encoder where its output is RFC 8785's, and
    by rfc8785 otherwise: byte for byte the same either way (a difference would break every chain)."""
    every_char = "".join(chr(c) for c in range(0x80)) + "\u00e9\u2028\u2029\ufeff\U0001f600"
    values: list[Any] = [
        {"b": 1, "a": [True, None, -5, 0, every_char], "": {"nested": [{"k": "v"}, []]}},
        {"edge": 2**53 - 1, "low": -(2**53) + 1},
        {"caf\u00e9": 1, "cafe": 2},  # a non-ASCII key: rfc8785's UTF-16 order
        {"\U0001f600": 1, "\ue000": 2},  # code-point and UTF-16 orders differ here
        {"f": 1.5, "e": 1e21, "z": -0.0},  # floats: rfc8785's number form
        {"big": 2**60},  # beyond 2**53: refused alike
        {"lone": "\ud800"},  # a lone surrogate: refused alike
        ["a", ("t", 1)],
    ]
    for value in values:
        try:
            expected = rfc8785.dumps(value)
        except rfc8785.CanonicalizationError as refused:
            with pytest.raises(type(refused)):
                canonical(value)
            continue
        assert canonical(value) == expected, value
