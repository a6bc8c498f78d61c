"""Stopping a background task (relay, scheduler loop) ends it and waits for it; a stop whose own caller is
cancelled meanwhile (a shutdown under a deadline) is cancelled too, instead of returning as if done."""

from __future__ import annotations

import asyncio

import pytest

from domain.kernel.tasks import cancel_and_wait


async def _slow_to_stop(cleaned: list[str]) -> None:
    try:
        await asyncio.sleep(60)
    finally:
        await asyncio.sleep(0.3)  # in-flight work finishing before the task ends
        cleaned.append("done")


async def test_the_stopped_task_has_ended_when_the_stop_returns() -> None:
    cleaned: list[str] = []
    task = asyncio.create_task(_slow_to_stop(cleaned))
    await asyncio.sleep(0)
    await cancel_and_wait(task)
    assert task.cancelled()
    assert cleaned == ["done"]


async def test_a_stop_whose_caller_is_cancelled_does_not_return_as_if_done() -> None:
    cleaned: list[str] = []
    task = asyncio.create_task(_slow_to_stop(cleaned))
    await asyncio.sleep(0)
    with pytest.raises(TimeoutError):  # swallowing the caller's cancellation would end the block quietly
        async with asyncio.timeout(0.05):
            await cancel_and_wait(task)
    assert cleaned == []  # the stop was cut short, and the caller was told so
    await cancel_and_wait(task)
