"""The Redis side of live events: a web process's subscription stops whenever it is stopped (at a stop during
its start too), and delivers what other processes publish."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import redis.asyncio

from domain.kernel.settings import get_settings
from infra.live import transport
from infra.live.transport import RedisPublisher, RedisSubscription
from tests.conftest import REDIS_URL
from tests.waiting import eventually

pytestmark = pytest.mark.skipif(not REDIS_URL, reason="needs Redis (CONCORD_TEST_REDIS_URL)")


async def test_a_subscription_stops_whenever_it_is_stopped():
    """A stop that lands while redis-py connects (which can turn the cancellation into a connection error)
    ends the subscription all the same, at every moment of its start."""
    settings = get_settings()
    for n in range(300):
        subscription = RedisSubscription(settings, lambda _events: None, lambda: None)
        subscription.start()
        await asyncio.sleep((n % 60) * 0.0003)
        await asyncio.wait_for(subscription.stop(), timeout=10)


async def test_another_processes_events_arrive_and_our_own_are_left_out():
    settings = get_settings()
    got: list[Any] = []
    connected = asyncio.Event()
    subscription = RedisSubscription(settings, got.append, connected.set)
    subscription.start()
    publisher = RedisPublisher(settings)
    publisher.start()
    client = redis.asyncio.Redis.from_url(settings.redis_url or "")
    try:
        await asyncio.wait_for(connected.wait(), timeout=10)
        record = {"sequenceNumber": 1, "type": "pact.test"}
        publisher.committed([("topic:ours", record)])  # this process's: its listeners had it directly
        theirs = {"origin": "another process", "events": [["topic:theirs", record]]}
        await client.publish(transport.channel(settings), json.dumps(theirs))
        await client.publish(transport.channel(settings), b"not one of ours")  # ignored, logged
        for _ in range(200):
            if got:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
        assert got == [[("topic:theirs", record)]]
    finally:
        await client.aclose()
        await asyncio.to_thread(publisher.stop)
        await subscription.stop()


async def test_a_process_nobody_listens_to_leaves_what_arrives_undelivered():
    """While the process's hub follows no stream, what arrives is not even decoded; once one is followed,
    other processes' events reach it again."""
    settings = get_settings()
    got: list[Any] = []
    listening = False
    connected = asyncio.Event()
    subscription = RedisSubscription(settings, got.append, connected.set, wanted=lambda: listening)
    subscription.start()
    client = redis.asyncio.Redis.from_url(settings.redis_url or "")
    record = {"sequenceNumber": 1, "type": "pact.test"}
    theirs = json.dumps({"origin": "another process", "events": [["topic:theirs", record]]})
    try:
        await asyncio.wait_for(connected.wait(), timeout=10)
        await client.publish(transport.channel(settings), theirs)
        await asyncio.sleep(0.3)
        assert got == []
        listening = True
        await client.publish(transport.channel(settings), theirs)
        for _ in range(200):
            if got:
                break
            await asyncio.sleep(0.05)
        assert got == [[("topic:theirs", record)]]
    finally:
        await client.aclose()
        await subscription.stop()


async def test_a_web_process_is_subscribed_only_while_it_has_listeners(hub, runtime, monkeypatch):
    """A web process nobody listens to holds no subscription (it is not sent every unit of work the others
    commit); its first listener subscribes it, and another process's event reaches that listener through
    Redis; some time after the last listener left, it unsubscribes."""
    from infra.live import hub as live_hub

    monkeypatch.setattr(live_hub, "UNSUBSCRIBE_AFTER_SECONDS", 0.3)
    settings = get_settings()
    name = transport.channel(settings)
    client = redis.asyncio.Redis.from_url(settings.redis_url or "")

    async def subscribers() -> int:
        return dict(await client.pubsub_numsub(name))[name.encode()]

    try:
        await asyncio.sleep(0.3)
        assert await subscribers() == 0
        listener = await runtime.live.listen("topic:elsewhere")
        await eventually(lambda: _equal(subscribers(), 1))
        record = {"sequenceNumber": 1, "type": "pact.test", "data": {}}
        theirs = {"origin": "another process", "events": [["topic:elsewhere", record]]}
        await client.publish(name, json.dumps(theirs))
        items = await asyncio.wait_for(listener.take(), timeout=10)
        assert [item.seq for item in items or [] if isinstance(item, live_hub.LiveEvent)] == [1]
        runtime.live.leave(listener)
        await eventually(lambda: _equal(subscribers(), 0))
    finally:
        await client.aclose()


async def _equal(value: Any, expected: Any) -> bool:
    return bool(await value == expected)


async def test_nothing_is_published_while_no_process_is_subscribed(monkeypatch):
    """A publisher asks Redis whether anyone is subscribed (at most every LISTENERS_FRESH_SECONDS) and
    publishes nothing while nobody is; once a process subscribes, its commits are published again."""
    monkeypatch.setattr(transport, "LISTENERS_FRESH_SECONDS", 0.2)
    settings = get_settings()
    name = transport.channel(settings)
    record = {"sequenceNumber": 1, "type": "pact.test"}
    publisher = RedisPublisher(settings)
    publisher.start()
    client = redis.asyncio.Redis.from_url(settings.redis_url or "")
    pubsub = client.pubsub(ignore_subscribe_messages=True)
    try:
        for _ in range(3):
            publisher.committed([("topic:unheard", record)])
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.1)
        assert publisher.sent == 0
        await pubsub.subscribe(name)
        await asyncio.sleep(0.3)  # the publisher's "nobody" is stale by now
        publisher.committed([("topic:heard", record)])
        message = None
        for _ in range(50):  # the subscription's confirmation comes first, read as None
            message = await pubsub.get_message(timeout=0.1)
            if message is not None:
                break
        assert message is not None
        assert transport.decode(message["data"]) is None  # this process's own: what it published
        await eventually(lambda: _equal(asyncio.sleep(0, publisher.sent), 1))  # counted after the send
    finally:
        await pubsub.aclose()
        await client.aclose()
        await asyncio.to_thread(publisher.stop)
