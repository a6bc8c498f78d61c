"""Stopping a background task (the outbox relay, the scheduler's loop, a lease renewer) from its owner."""

from __future__ import annotations

import asyncio


async def cancel_and_wait(task: asyncio.Task[object]) -> None:
    """Cancel `task` and wait until it has ended. Its CancelledError is expected and swallowed, but not
    one meant for the caller: a caller cancelled while it waits (a shutdown's own timeout) stays cancelled,
    instead of returning as if the stop had finished."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
