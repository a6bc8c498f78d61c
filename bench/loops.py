"""The bare servers' event loop (`--bare-loop`): asyncio's by default, the baseline the aims of issue 35 name
(a bare aiohttp handler as aiohttp runs it), or uvloop's, the loop `concord` serves on by default
(`CONCORD_EVENT_LOOP`), to see how much of a ratio is the loop."""

from __future__ import annotations

import argparse

from domain.kernel.settings import EventLoop

# Prepended to a bare server's script: `web.run_app` makes its loop through the policy.
_UVLOOP = "import asyncio, uvloop\nasyncio.set_event_loop_policy(uvloop.EventLoopPolicy())\n"


def add_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bare-loop",
        choices=[loop.value for loop in EventLoop],
        default=EventLoop.ASYNCIO.value,
        help="event loop of the bare server (default asyncio; concord runs on CONCORD_EVENT_LOOP, uvloop "
        "unless set)",
    )


def bare(script: str, loop: str) -> str:
    """The bare server's script, run on `loop`."""
    return _UVLOOP + script if loop == EventLoop.UVLOOP else script
