"""Runs a serving process's main coroutine on the event loop its settings name (`CONCORD_EVENT_LOOP`)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from domain.kernel.settings import EventLoop, Settings

T = TypeVar("T")


def run(settings: Settings, main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on uvloop's loop, or on asyncio's when the settings say so. A supervisor runs on
    asyncio's whatever they say (uvloop keeps SIGCHLD to itself; infra/forked.py needs it), and its forked
    children call this afresh."""
    if settings.event_loop is EventLoop.UVLOOP:
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)


def name() -> str:
    """The running loop's kind, as `CONCORD_EVENT_LOOP` spells it."""
    module = type(asyncio.get_running_loop()).__module__
    return EventLoop.UVLOOP.value if module.startswith("uvloop") else EventLoop.ASYNCIO.value
