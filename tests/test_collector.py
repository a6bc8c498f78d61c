"""infra/collector.py: a process pauses the cyclic collector while it starts, then settles it: what it built
is frozen out of later collections, collections are rarer, and garbage in cycles is still collected. Each
runs in a fresh interpreter (the test worker's own collector was settled by the suite's conftest)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from infra.collector import THRESHOLDS


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_settled_process_freezes_what_it_built_and_collects_rarely() -> None:
    out = _python(
        """
        import gc
        from infra import collector

        collector.pause()
        assert not gc.isenabled()
        kept = [[i] for i in range(20_000)]  # what a process builds at start and keeps
        collector.settle()
        print(gc.isenabled(), gc.get_threshold(), gc.get_freeze_count() >= 20_000)
        collector.pause()
        collector.settle()  # a second settle turns the collector on again and changes nothing else
        print(gc.isenabled(), gc.get_threshold())
        """
    )
    assert out.split("\n")[:2] == [f"True {THRESHOLDS} True", f"True {THRESHOLDS}"]


def test_garbage_in_cycles_is_still_collected_after_settling() -> None:
    out = _python(
        """
        import gc, weakref
        from infra import collector

        collector.settle()

        class Node:
            pass

        gone = []
        for _ in range(1_000):
            a, b = Node(), Node()
            a.other, b.other = b, a  # a cycle: reference counting alone never frees it
            weakref.finalize(a, gone.append, 1)
            del a, b
        assert len(gone) < 1_000  # the cycles wait for a young collection
        for _ in range(5):
            _ = [[] for _ in range(gc.get_threshold()[0])]  # allocations enough for a collection or more
        print(len(gone))
        """
    )
    assert out.strip() == "1000"
