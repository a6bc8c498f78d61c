"""`python -m workers.liveness PATH [SECONDS]`: exit 0 when the file at PATH was touched within SECONDS (60 by
default), else 1 with the reason on standard error.

A worker pod's liveness probe: `concord worker --alive-file PATH` touches the file every 5 s while the group's
parent runs its loop (workers/group.py); the parent restarts dead or frozen worker processes itself, so a
stale file means the parent hangs. Only the standard library: the probe starts an interpreter each time."""

from __future__ import annotations

import os
import sys
import time

DEFAULT_SECONDS = 60.0


def check(path: str, seconds: float) -> str | None:
    """None when `path` is fresh, else why not."""
    try:
        age = time.time() - os.stat(path).st_mtime
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if age > seconds:
        return f"{path} was last touched {age:.0f} s ago (more than {seconds:g} s)"
    return None


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print("usage: python -m workers.liveness PATH [SECONDS]", file=sys.stderr)
        return 2
    try:
        seconds = float(argv[1]) if len(argv) == 2 else DEFAULT_SECONDS
    except ValueError:
        print(f"not a number of seconds: {argv[1]!r}", file=sys.stderr)
        return 2
    reason = check(argv[0], seconds)
    if reason is not None:
        print(f"not alive: {reason}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
