"""Waiting for a condition: free of side effects, so that the benchmarks can import it (tests/conftest.py,
which sets the test run's environment on import, re-exports it for the tests)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any


async def eventually(
    check: Callable[[], Awaitable[Any]], *, timeout: float = 15.0, interval: float = 0.05
) -> Any:
    """Poll `check` until it returns a truthy value; fail with the last value after `timeout`."""
    deadline = asyncio.get_running_loop().time() + timeout
    last: Any = None
    while asyncio.get_running_loop().time() < deadline:
        last = await check()
        if last:
            return last
        await asyncio.sleep(interval)
    raise AssertionError(f"condition not met within {timeout}s; last value: {last!r}")
