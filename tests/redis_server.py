"""A throwaway redis-server of a test's own, on a free port, that the test stops and starts at will (no
persistence: a restart comes back empty, as a Redis without AOF does)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.processes import free_port, stop

REDIS_SERVER = shutil.which("redis-server")
needs_redis_server = pytest.mark.skipif(REDIS_SERVER is None, reason="needs the redis-server program")


class RedisServer:
    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        assert REDIS_SERVER is not None
        assert self.proc is None
        log = (self.directory / f"redis-{self.port}.log").open("ab")
        self.proc = subprocess.Popen(
            [
                REDIS_SERVER,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            cwd=self.directory,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        for _ in range(200):
            try:
                _reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            writer.close()
            await writer.wait_closed()
            return
        raise AssertionError("redis-server did not start")

    def kill(self) -> None:
        """Gone at once, as in a crash: its clients' connections are cut."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)
            self.proc = None
