"""Stopping the outbox relay ends it, whenever the stop comes: also in the instant a commit wakes it. On
Python 3.11 `asyncio.wait_for` returns the awaited result instead of raising when its task is cancelled
just after that result arrived, so a relay waiting on its wake-up event with `wait_for` swallowed the
cancellation and ran on, and `Relay.stop` (a runtime's shutdown, every test's teardown) waited forever."""

from __future__ import annotations

import asyncio
from typing import Any

from dramatiq.brokers.stub import StubBroker

from workers import actors
from workers.relay import Relay


async def test_a_relay_woken_as_it_is_stopped_still_stops(runtime: Any) -> None:
    broker = StubBroker()
    actors.declare(broker, runtime.settings)
    # Each round wakes an idle relay and stops it a few loop iterations later (0 to 7), which covers the
    # moment the wake-up has reached the relay's wait but not yet the relay itself.
    for round_ in range(48):
        relay = Relay(runtime.db, broker, 60.0)
        relay.start()
        await asyncio.sleep(0.05)  # its first pass, over an empty outbox, then idle on its event
        relay.wake()
        for _ in range(round_ % 8):
            await asyncio.sleep(0)
        async with asyncio.timeout(5):  # a stop takes a few milliseconds
            await relay.stop()
