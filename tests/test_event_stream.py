"""Live events as Server-Sent Events (PACT §7.2) on both apps, through HTTP against the running apps: every
event of a merge arrives, in order, as the event list serves it; a reconnection with Last-Event-ID (or
?after=) loses and repeats nothing; a slow listener is ended while a fast one keeps receiving; access is
refused as the event list refuses it; a process serves a bounded number of streams."""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
from typing import Any

import aiohttp
import pytest

from tests.consensus_helpers import open_topic, propose, vote
from tests.documents_support import make_key, upload_ready
from tests.processes import concord, served
from tests.sse_client import Message, Reader, of_response
from tests.test_observability import scrape
from tests.test_observability import value as metric
from tests.waiting import eventually
from web.kernel.sse import realtime_endpoint

ACCEPT = {"Accept": "text/event-stream"}


async def listed(client: Any, path: str, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Every event of the list (`path` is the event list's), in order."""
    found: list[dict[str, Any]] = []
    after = "0"
    while True:
        resp = await client.get(path, params={"after": after, "limit": "200"}, headers=headers)
        assert resp.status == 200, await resp.text()
        page = await resp.json()
        found += page["events"]
        if not page["hasMore"]:
            return found
        after = page["nextCursor"]


async def open_stream(client: Any, path: str, headers: dict[str, str] | None = None, **params: str) -> Any:
    resp = await client.get(path, headers={**ACCEPT, **(headers or {})}, params=params or None)
    assert resp.status == 200, await resp.text()
    assert resp.content_type == "text/event-stream"
    assert resp.headers["Cache-Control"] == "no-cache"
    return resp


async def merge(hub: Any, topic_id: str, agents: list[dict[str, Any]]) -> str:
    proposal = await propose(hub, topic_id, agents[0])
    for voter in agents[1:3]:
        await vote(hub, topic_id, proposal["id"], voter, "approve")
    return str(proposal["id"])


def as_listed(messages: list[Message]) -> list[dict[str, Any]]:
    for message in messages:
        assert message.id == message.record["eventId"]
        assert message.event == message.record["type"]
    return [m.record for m in messages]


async def test_a_topic_stream_replays_then_delivers_every_event_of_a_merge_in_order(hub, register):
    topic_id, agents = await open_topic(hub, register)
    before = await listed(hub, f"/api/pact/{topic_id}/events")
    resp = await open_stream(hub, f"/api/pact/{topic_id}/events/stream")
    reader = of_response(resp)
    replayed = await reader.take(len(before))
    assert as_listed(replayed) == before
    assert (reader.retry or 0) > 0

    proposal_id = await merge(hub, topic_id, agents)
    after = await listed(hub, f"/api/pact/{topic_id}/events")
    live = await reader.take(len(after) - len(before))
    assert as_listed(live) == after[len(before) :]  # byte for byte what the list serves, in order
    assert [m.seq for m in replayed + live] == list(range(1, len(after) + 1))
    assert any(m.event == "pact.proposal.merged" and m.record["correlationId"] == proposal_id for m in live)
    resp.close()


async def test_the_data_line_is_the_list_record_serialised_as_the_list_serialises_it(hub, register):
    topic_id, _agents = await open_topic(hub, register)
    resp = await hub.get(f"/api/pact/{topic_id}/events", params={"limit": "1"})
    raw_page = await resp.text()
    stream = await open_stream(hub, f"/api/pact/{topic_id}/events/stream")
    first = await of_response(stream).next()
    assert first is not None
    # The page's first record, as text, is the message's data exactly.
    assert f'"events":[{first.data}' in raw_page
    stream.close()


async def test_reconnecting_with_last_event_id_loses_and_repeats_nothing(
    hub, register, settings, monkeypatch
):
    monkeypatch.setattr(settings, "sse_heartbeat_seconds", 0.2)
    topic_id, agents = await open_topic(hub, register)
    path = f"/api/pact/{topic_id}/events/stream"
    first = await open_stream(hub, path)
    reader = of_response(first)
    got = await reader.take(3)
    first.close()  # the client goes away after three events
    await merge(hub, topic_id, agents)  # events it misses

    # An EventSource reconnects to the same URL (here with ?after=1, which the header overrides).
    again = await open_stream(hub, path, headers={"Last-Event-ID": got[-1].id or ""}, after="1")
    reader = of_response(again)
    total = len(await listed(hub, f"/api/pact/{topic_id}/events"))
    got += await reader.take(total - 3)
    await merge(hub, topic_id, agents)  # and live ones after the replay
    total = len(await listed(hub, f"/api/pact/{topic_id}/events"))
    got += await reader.take(total - len(got))
    assert [m.seq for m in got] == list(range(1, total + 1))
    again.close()

    # Without the header, ?after= is the cursor, in either form.
    for after in (str(total - 2), f"evt_{total - 2}"):
        resp = await open_stream(hub, path, after=after)
        assert [m.seq for m in await of_response(resp).take(2)] == [total - 1, total]
        resp.close()


async def test_streams_opened_while_events_keep_coming_have_every_event_once(hub, register):
    """The switch from replay to live has no gap and no repeat: streams open at every moment of a run of
    writes, and each sees 1..N exactly."""
    topic_id, agents = await open_topic(hub, register)
    path = f"/api/pact/{topic_id}/events/stream"
    writes = 40

    async def write() -> None:
        for i in range(writes):
            agent = agents[i % len(agents)]
            body = {"sectionId": "sec:answer", "score": i % 10}
            resp = await hub.post(f"/api/pact/{topic_id}/salience", headers=agent["headers"], json=body)
            assert resp.status in (200, 201), await resp.text()

    async def listen(delay: float) -> tuple[Any, Reader]:
        await asyncio.sleep(delay)
        resp = await open_stream(hub, path)
        return resp, of_response(resp)

    writer = asyncio.create_task(write())
    streams = await asyncio.gather(*(listen(i * 0.01) for i in range(12)))
    await writer
    total = len(await listed(hub, f"/api/pact/{topic_id}/events"))
    for resp, reader in streams:
        assert [m.seq for m in await reader.take(total)] == list(range(1, total + 1))
        resp.close()


async def test_keep_alive_comments_while_idle(hub, register, settings, monkeypatch):
    monkeypatch.setattr(settings, "sse_heartbeat_seconds", 0.1)
    topic_id, _agents = await open_topic(hub, register)
    resp = await open_stream(hub, f"/api/pact/{topic_id}/events/stream")
    reader = of_response(resp)
    total = len(await listed(hub, f"/api/pact/{topic_id}/events"))
    await reader.take(total)
    with pytest.raises(TimeoutError):
        await reader.next(timeout=0.5)  # no event comes: only comments
    assert "keep-alive" in reader.comments
    resp.close()


async def test_a_stream_ends_after_its_lifetime_and_resumes_where_it_was(
    hub, register, settings, monkeypatch
):
    monkeypatch.setattr(settings, "sse_max_seconds", 1.0)
    monkeypatch.setattr(settings, "sse_heartbeat_seconds", 0.2)
    topic_id, agents = await open_topic(hub, register)
    resp = await open_stream(hub, f"/api/pact/{topic_id}/events/stream")
    got = await of_response(resp).until_end()  # the server ends it
    await merge(hub, topic_id, agents)
    again = await open_stream(hub, f"/api/pact/{topic_id}/events/stream", {"Last-Event-ID": got[-1].id or ""})
    total = len(await listed(hub, f"/api/pact/{topic_id}/events"))
    got += await of_response(again).take(total - len(got))
    assert [m.seq for m in got] == list(range(1, total + 1))
    again.close()


async def _raw_stream(url: Any, path: str, headers: dict[str, str]) -> socket.socket:
    """A client that asks for a stream and then reads nothing, with a small receive buffer (a slow one)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, (url.host, url.port))
    lines = [f"GET {path} HTTP/1.1", f"Host: {url.host}:{url.port}", "Accept: text/event-stream"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    await loop.sock_sendall(sock, ("\r\n".join(lines) + "\r\n\r\n").encode())
    return sock


async def _read_to_end(sock: socket.socket, timeout: float = 30.0) -> bytes:
    """Everything the server sent until it closed the stream (chunked body decoded); fails on a timeout."""
    loop = asyncio.get_running_loop()
    raw = b""
    async with asyncio.timeout(timeout):
        while chunk := await loop.sock_recv(sock, 65536):
            raw += chunk
            if raw.endswith(b"\r\n0\r\n\r\n"):
                break
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    assert b"transfer-encoding: chunked" in head.lower(), head
    decoded = b""
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return decoded
        decoded += rest[:size]
        body = rest[size + 2 :]
    raise AssertionError("the stream was not ended by the server")


async def test_a_slow_listener_is_ended_while_a_fast_one_keeps_receiving(
    hub, register, settings, monkeypatch
):
    monkeypatch.setattr(settings, "sse_queue_events", 4)
    topic_id, agents = await open_topic(hub, register)
    path = f"/api/pact/{topic_id}/events/stream"
    slow = await _raw_stream(hub.make_url("/"), path, {})
    fast = await open_stream(hub, path)
    fast_reader = of_response(fast)
    got: list[Message] = []
    goal = "g" * 1990  # a large event, so a client that does not read falls behind quickly
    for i in range(120):
        agent = agents[i % len(agents)]
        body = {"sectionId": "sec:answer", "goal": f"{i} {goal}"}
        resp = await hub.post(f"/api/pact/{topic_id}/intents", headers=agent["headers"], json=body)
        assert resp.status == 201, await resp.text()
        got += await fast_reader.take(1)  # the fast client keeps up, event by event
    total = len(await listed(hub, f"/api/pact/{topic_id}/events"))
    got += await fast_reader.take(total - len(got))
    assert [m.seq for m in got] == list(range(1, total + 1))

    # The slow one was ended: what it got is the stream's start, without a gap, and not all of it.
    text = (await _read_to_end(slow)).decode()
    assert metric(await scrape(hub), "concord_event_streams_ended_total", reason="slow") >= 1
    slow.close()
    messages = await Reader(_lines(text)).until_end()
    seqs = [m.seq for m in messages]
    assert seqs == list(range(1, len(seqs) + 1))
    assert len(seqs) < total
    # It resumes from its last event, and misses nothing.
    resumed = await open_stream(hub, path, {"Last-Event-ID": messages[-1].id or ""})
    rest = await of_response(resumed).take(total - len(seqs))
    assert [m.seq for m in rest] == list(range(len(seqs) + 1, total + 1))
    resumed.close()
    fast.close()


def _lines(text: str) -> Any:
    lines = iter(text.splitlines(keepends=True))

    async def readline() -> bytes:
        return next(lines, "").encode()

    return readline


async def test_a_process_serves_a_bounded_number_of_streams(hub, register, settings, monkeypatch):
    monkeypatch.setattr(settings, "sse_max_connections", 1)
    monkeypatch.setattr(settings, "sse_heartbeat_seconds", 0.1)
    topic_id, _agents = await open_topic(hub, register)
    path = f"/api/pact/{topic_id}/events/stream"
    first = await open_stream(hub, path)
    resp = await hub.get(path)
    assert resp.status == 503
    assert int(resp.headers["Retry-After"]) >= 1
    assert "event streams" in (await resp.json())["detail"]
    first.close()  # its place is free once the server notices (at its next keep-alive)

    async def admitted() -> Any:
        resp = await hub.get(path)
        if resp.status == 200:
            return resp
        assert resp.status == 503
        resp.release()
        return None

    (await eventually(admitted)).close()


async def test_one_client_holds_a_bounded_number_of_streams_and_others_still_get_theirs(
    hub, register, settings, monkeypatch
):
    monkeypatch.setattr(settings, "sse_max_per_client", 2)
    monkeypatch.setattr(settings, "sse_heartbeat_seconds", 0.1)
    topic_id, agents = await open_topic(hub, register, n_agents=2)
    path = f"/api/pact/{topic_id}/events/stream"
    ada, bob = agents[0]["headers"], agents[1]["headers"]
    held = [await open_stream(hub, path, headers=ada), await open_stream(hub, path, headers=ada)]
    resp = await hub.get(path, headers=ada)
    assert resp.status == 429
    assert int(resp.headers["Retry-After"]) >= 1
    assert "event streams" in (await resp.json())["detail"]
    # Another key, and a client without one, are counted apart.
    (await open_stream(hub, path, headers=bob)).close()
    (await open_stream(hub, path)).close()
    held.pop().close()  # its place is the client's again once the server notices

    async def admitted() -> Any:
        resp = await hub.get(path, headers=ada)
        if resp.status == 200:
            return resp
        assert resp.status == 429
        resp.release()
        return None

    (await eventually(admitted)).close()
    held[0].close()


async def test_a_client_gone_before_its_stream_begins_is_a_499_not_a_server_error(
    hub, register, runtime, caplog
):
    """Served as `concord serve` serves (a handler runs on after its client closed: aiohttp's test server
    cancels it instead), a stream whose reader resets the connection right after asking is counted and
    logged as the client's leaving, with no ERROR and no 500."""
    from web.app import create_hub_app

    topic_id, _agents = await open_topic(hub, register)
    caplog.set_level(logging.INFO)
    request = (
        f"GET /api/pact/{topic_id}/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Accept: text/event-stream\r\n\r\n"
    ).encode()

    def statuses() -> list[int]:
        return [r.status for r in caplog.records if r.name == "concord.access"]

    async def all_logged() -> bool:
        return len(statuses()) == 5

    async with served(create_hub_app(runtime)) as port:
        for _ in range(5):
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.sendall(request)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close: RST
        await eventually(all_logged)
    assert statuses() == [499] * 5
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_a_topic_stream_is_refused_as_the_topic_event_list_is(hub):
    for missing in ("no-such-topic", "00000000-0000-4000-8000-000000000000"):
        listed_resp = await hub.get(f"/api/pact/{missing}/events")
        resp = await hub.get(f"/api/pact/{missing}/events/stream")
        assert (resp.status, await resp.json()) == (listed_resp.status, await listed_resp.json())
        assert resp.status == 404
    for bad in ("x", "evt_", "-1", "evt_99999999999"):
        resp = await hub.get("/api/pact/no-such-topic/events/stream", params={"after": bad})
        assert resp.status == 400
        assert (await resp.json())["field"] == "after"


async def test_a_bad_last_event_id_is_a_400_naming_it(hub, register):
    topic_id, _agents = await open_topic(hub, register)
    resp = await hub.get(f"/api/pact/{topic_id}/events/stream", headers={"Last-Event-ID": "evt_x"})
    assert resp.status == 400
    body = await resp.json()
    assert body["field"] == "Last-Event-ID"


MD = b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n\n## Risks\n\nMany.\n"


async def test_a_document_stream_delivers_a_merge_and_is_refused_as_its_event_list(docs, runtime):
    keys = [await make_key(runtime, org="Stream Org", name=f"k{i}") for i in range(3)]
    doc = await upload_ready(docs, keys[0], MD, "plan.md")
    for i, (key, role) in enumerate(zip(keys, ("editor", "reviewer", "reviewer"), strict=True)):
        resp = await docs.post(
            f"/api/tap/{doc['id']}/join", headers=key["headers"], json={"agentName": f"a{i}", "role": role}
        )
        assert resp.status == 201, await resp.text()
    events_path = f"/api/tap/{doc['id']}/events"
    before = await listed(docs, events_path, keys[0]["headers"])
    streams = []
    for prefix in ("/api/tap", "/api/pact"):  # the PACT path is an alias, as for every document route
        resp = await open_stream(docs, f"{prefix}/{doc['id']}/events/stream", keys[1]["headers"])
        streams.append((resp, of_response(resp)))
    resp = await docs.post(
        f"/api/tap/{doc['id']}/proposals",
        headers=keys[0]["headers"],
        json={"sectionId": "sec:plan:budget", "content": "More money.", "summary": "s"},
    )
    assert resp.status == 201, await resp.text()
    proposal_id = (await resp.json())["proposalId"]
    for key in keys[1:]:
        resp = await docs.post(
            f"/api/tap/{doc['id']}/proposals/{proposal_id}/approve", headers=key["headers"]
        )
        assert resp.status == 200, await resp.text()
    after = await listed(docs, events_path, keys[0]["headers"])
    assert "pact.proposal.merged" in [e["type"] for e in after[len(before) :]]
    for resp, reader in streams:
        assert as_listed(await reader.take(len(after))) == after
        resp.close()

    stream_path = f"/api/pact/{doc['id']}/events/stream"
    other_org = await make_key(runtime, org="Elsewhere")
    lacking = await make_key(runtime, org="Stream Org", scopes="documents:read")
    for headers in ({}, {"X-Api-Key": "svc_sk_" + "0" * 40}, other_org["headers"], lacking["headers"]):
        listed_resp = await docs.get(f"/api/pact/{doc['id']}/events", headers=headers)
        resp = await docs.get(stream_path, headers=headers)
        assert resp.status == listed_resp.status
        assert resp.status in (401, 403, 404)
        assert resp.content_type == "application/problem+json"
        assert (await resp.json())["code"] == (await listed_resp.json())["code"]


async def test_events_no_notice_announced_arrive_by_the_periodic_check(hub, register, settings, monkeypatch):
    """A `concord` command writes events in a process of its own, which tells no web process: the check of
    the streams' counters finds them."""
    monkeypatch.setattr(settings, "sse_check_seconds", 0.2)
    topic_id, _agents = await open_topic(hub, register)
    resp = await open_stream(hub, f"/api/pact/{topic_id}/events/stream")
    reader = of_response(resp)
    total = len(await listed(hub, f"/api/pact/{topic_id}/events"))
    await reader.take(total)
    code, _out, err = await concord("events", "root", f"topic:{topic_id}")
    assert code == 0, err
    (root,) = await reader.take(1)
    assert (root.event, root.seq) == ("pact.log.root", total + 1)
    assert as_listed([root]) == (await listed(hub, f"/api/pact/{topic_id}/events"))[total:]
    resp.close()


async def test_open_and_ended_streams_are_counted_in_the_metrics(hub, register, settings, monkeypatch):
    monkeypatch.setattr(settings, "sse_heartbeat_seconds", 0.1)
    topic_id, _agents = await open_topic(hub, register)
    before = await scrape(hub)
    opened = [await open_stream(hub, f"/api/pact/{topic_id}/events/stream") for _ in range(2)]
    during = await scrape(hub)
    gauge = "concord_event_streams"
    assert metric(during, gauge, app="hub") - metric(before, gauge, app="hub") == 2
    for resp in opened:
        resp.close()

    async def ended() -> bool:
        after = await scrape(hub)
        name, labels = "concord_event_streams_ended_total", {"app": "hub", "reason": "client"}
        gone = metric(after, name, **labels) - metric(before, name, **labels)
        return metric(after, gauge, app="hub") == metric(before, gauge, app="hub") and gone == 2

    await eventually(ended)


async def test_the_realtime_endpoint_template_names_each_apps_stream(hub, docs, register, runtime):
    """What the implementation profile publishes as endpoints.realtime, with a resource's id put in, is the
    resource's stream on either app."""
    assert realtime_endpoint() == "/api/pact/{id}/events/stream"
    topic_id, _agents = await open_topic(hub, register)
    key = await make_key(runtime, org="Template Org")
    doc = await upload_ready(docs, key, MD, "plan.md")
    async with aiohttp.ClientSession() as http:
        for client, resource, headers, first in (
            (hub, topic_id, {}, "pact.topic.proposed"),
            (docs, doc["id"], key["headers"], "pact.document.uploaded"),
        ):
            base = f"http://{client.host}:{client.port}"
            template = realtime_endpoint(base)
            assert template == f"{base}/api/pact/{{id}}/events/stream"
            async with http.get(template.replace("{id}", resource), headers=headers) as resp:
                assert resp.status == 200
                assert (await of_response(resp).take(1))[0].event == first


async def test_a_listeners_queue_holds_at_most_its_bound_and_nothing_once_ended(
    hub, register, runtime, settings, monkeypatch
):
    """The bound of a listener's memory (issue 35): its queue holds at most `sse_queue_events` events; the
    next one ends it (slow) and drops what it held, while a listener that reads gets every event in order."""
    from domain.topics import store as topics
    from infra.live.hub import Ended, Listener, LiveEvent

    monkeypatch.setattr(settings, "sse_queue_events", 4)
    monkeypatch.setattr(settings, "sse_heartbeat_seconds", 3600)  # no keep-alive takes a place meanwhile
    topic_id, agents = await open_topic(hub, register)
    async with runtime.db.read() as session:
        stream = await topics.event_stream(session, topic_id)
    slow = await runtime.live.listen(stream)
    fast = await runtime.live.listen(stream)
    received: list[int] = []

    def why(listener: Listener) -> Ended | None:
        return listener.ended  # read afresh each time: the hub ends a listener meanwhile

    async def intent(i: int) -> None:
        body = {"sectionId": "sec:answer", "goal": f"goal {i}"}
        resp = await hub.post(
            f"/api/pact/{topic_id}/intents", headers=agents[i % len(agents)]["headers"], json=body
        )
        assert resp.status == 201, await resp.text()

    async def fast_takes(count: int) -> None:
        while count > 0:
            items = await asyncio.wait_for(fast.take(), 30)
            assert items is not None
            seqs = [item.seq for item in items if isinstance(item, LiveEvent)]
            received.extend(seqs)
            count -= len(seqs)

    try:
        for i in range(3):  # fewer than the bound: the slow listener holds them all, still listening
            await intent(i)
            await fast_takes(1)
        assert why(slow) is None
        held = await asyncio.wait_for(slow.take(), 30)
        assert held is not None
        assert [item.seq for item in held if isinstance(item, LiveEvent)] == received
        since = len(received)  # its queue is empty again; now it reads nothing
        i = 3
        while why(slow) is None:
            await intent(i)
            await fast_takes(1)
            i += 1
            waiting = len(received) - since
            # Up to the bound it keeps them; the event beyond ends it.
            assert (why(slow) is None) == (waiting <= 4), (waiting, why(slow))
            assert i < 20
        assert why(slow) is Ended.SLOW
        assert await slow.take() is None  # it holds nothing any more
        assert why(fast) is None
        assert received == list(range(received[0], received[0] + len(received)))
    finally:
        runtime.live.leave(slow)
        runtime.live.leave(fast)
