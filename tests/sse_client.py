"""A Server-Sent Events reader for the tests, written to the WHATWG parsing rules (fields, comments, a blank
line dispatching a message), over any stream of bytes: an aiohttp response's body or a raw socket."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Message:
    id: str | None
    event: str
    data: str

    @property
    def record(self) -> dict[str, Any]:
        found = json.loads(self.data)
        assert isinstance(found, dict)
        return found

    @property
    def seq(self) -> int:
        return int(self.record["sequenceNumber"])


@dataclass
class Reader:
    """Reads messages from `readline` (which answers b"" at the end of the stream)."""

    readline: Callable[[], Awaitable[bytes]]
    retry: int | None = None
    comments: list[str] = field(default_factory=list)
    ended: bool = False

    async def next(self, timeout: float = 15.0) -> Message | None:
        """The next message; None once the server has ended the stream."""
        async with asyncio.timeout(timeout):
            event_id: str | None = None
            event = "message"
            data: list[str] = []
            while True:
                raw = await self.readline()
                if not raw:
                    self.ended = True
                    return None
                line = raw.decode().rstrip("\r\n")
                if line == "":
                    if data:
                        return Message(event_id, event, "\n".join(data))
                    continue
                if line.startswith(":"):
                    self.comments.append(line[1:].strip())
                    continue
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "id":
                    event_id = value
                elif name == "event":
                    event = value
                elif name == "data":
                    data.append(value)
                elif name == "retry" and value.isdigit():
                    self.retry = int(value)

    async def take(self, n: int, timeout: float = 15.0) -> list[Message]:
        found: list[Message] = []
        while len(found) < n:
            message = await self.next(timeout)
            assert message is not None, f"the stream ended after {len(found)} of {n} messages"
            found.append(message)
        return found

    async def until_end(self, timeout: float = 30.0) -> list[Message]:
        """Every message until the server ends the stream."""
        found: list[Message] = []
        while (message := await self.next(timeout)) is not None:
            found.append(message)
        return found


def of_response(resp: Any) -> Reader:
    """A reader of an aiohttp client response's body."""
    return Reader(resp.content.readline)
