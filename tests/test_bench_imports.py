"""The benchmarks borrow the tests' helpers (starting processes, free ports, query plans, built documents)
but none of the test run's set-up: tests/conftest.py rewrites the environment on import (one web process,
the cheapest password hash, its own data folder, a shifted clock), which would have every benchmark
measure a server configured for the tests instead of the one an operator runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = sorted(p.stem for p in (ROOT / "bench").glob("*.py") if p.stem != "__init__")

PROBE = """
import importlib, os, sys
before = dict(os.environ)
for name in sys.argv[1:]:
    importlib.import_module("bench." + name)
changed = sorted(k for k in set(before) | set(os.environ) if before.get(k) != os.environ.get(k))
print("conftest" if "tests.conftest" in sys.modules else "clean", ",".join(changed))
"""


def test_the_benchmarks_import_no_test_set_up() -> None:
    assert {"write_path", "read_path", "sse_fanout", "write_instructions"} <= set(BENCHMARKS)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *BENCHMARKS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0].split(" ") == ["clean", ""], done.stdout
