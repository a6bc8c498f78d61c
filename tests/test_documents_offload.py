"""The offload pool's child (domain/documents/offload.py) lives and dies with the process that uses it:
a web process killed outright leaves no child behind; it runs at a lower CPU priority than that process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from domain.documents import offload

SCRIPT = """
import asyncio, os, sys
from domain.documents import offload

async def main():
    child = await offload.run(os.getpid)
    print(child, flush=True)
    await asyncio.sleep(3600)

if __name__ == "__main__":
    asyncio.run(main())
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone in all but name: it waits for a parent to reap it.
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_the_pool_child_ends_when_its_process_is_killed(tmp_path):
    script = tmp_path / "uses_pool.py"
    script.write_text(SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=os.getcwd())
    try:
        assert proc.stdout is not None
        child = int(proc.stdout.readline())
        assert child != proc.pid
        assert _alive(child)
        # It works at a lower CPU priority than its process, which answers requests meanwhile.
        priority = os.getpriority(os.PRIO_PROCESS, child) - os.getpriority(os.PRIO_PROCESS, proc.pid)
        assert priority == min(offload.CHILD_NICENESS, 19 - os.getpriority(os.PRIO_PROCESS, proc.pid))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    for _ in range(150):  # the child looks for its parent every second
        if not _alive(child):
            return
        time.sleep(0.1)
    os.kill(child, signal.SIGKILL)
    raise AssertionError("the pool's child outlived the process that started it")
