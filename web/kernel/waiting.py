"""A request that hands work to a job may wait a short bound for its outcome before answering 202."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def wait_while(
    pending: Callable[[T], bool], current: T, reload: Callable[[], Awaitable[T]], *, seconds: float
) -> T:
    """Re-read `current` every 50 ms while it is pending, for at most `seconds`; the last value read."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while pending(current) and loop.time() < deadline:
        await asyncio.sleep(0.05)
        current = await reload()
    return current
