"""The suite's in-process Dramatiq worker kept to one test at a time.

The worker outlives every test of an xdist worker. A message an earlier test sent can still be in it when the
next test starts: being processed, or held in the worker's memory until its time (a retry's backoff, a busy
lease's re-send), where `broker.flush_all()` does not reach. Run during the next test's set-up, such a job
deadlocked with the wipe of the tables (seen on PostgreSQL: `DELETE FROM outbox_jobs` against a job holding
its outbox row and an escalation's), and run during the next test, it committed under that test's feet (a
cached read of that test served afresh).

`Tests` stamps every message with the test it was sent in (a retry's copy keeps its original's stamp, and the
stamp cannot move on while a job runs, so what a job sends carries its own test's) and skips, acked and unrun,
a message of an earlier test. `next_test()` waits for the jobs in progress to end and moves the stamp on,
under the same lock a job takes to start: no job of an earlier test starts after it returns."""

from __future__ import annotations

import threading
import time
from typing import Any

import dramatiq
from dramatiq.middleware import Middleware, SkipMessage

STAMP = "concord_suite_test"


class Tests(Middleware):
    def __init__(self) -> None:
        self.test = 0
        self._running: dict[str, str] = {}  # message id → actor, of the jobs in progress
        self._lock = threading.Lock()

    def before_enqueue(self, broker: dramatiq.Broker, message: Any, delay: int | None) -> None:
        if STAMP not in message.options:
            message.options[STAMP] = self.test

    def before_process_message(self, broker: dramatiq.Broker, message: Any) -> None:
        with self._lock:
            if message.options.get(STAMP, self.test) != self.test:
                raise SkipMessage(f"sent by an earlier test ({message.actor_name})")
            self._running[message.message_id] = message.actor_name

    def after_process_message(
        self, broker: dramatiq.Broker, message: Any, *, result: Any = None, exception: Any = None
    ) -> None:
        self._done(message)

    def after_skip_message(self, broker: dramatiq.Broker, message: Any) -> None:
        self._done(message)

    def _done(self, message: Any) -> None:
        with self._lock:
            self._running.pop(message.message_id, None)

    def next_test(self, timeout: float = 60.0) -> None:
        """Wait until no job is in progress, then let only messages sent from now on run."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if not self._running:
                    self.test += 1
                    return
                running = sorted(self._running.values())
            if time.monotonic() > deadline:
                raise TimeoutError(f"the suite's worker is still running an earlier test's jobs: {running}")
            time.sleep(0.01)


def of(broker: dramatiq.Broker) -> Tests:
    """The broker's `Tests`, added on first use (before the suite's worker starts)."""
    for middleware in broker.middleware:
        if isinstance(middleware, Tests):
            return middleware
    tests = Tests()
    broker.add_middleware(tests)
    return tests
