"""Committed events, handed to whatever in this process follows them (the live event streams, infra/live).

The journal (domain/kernel/journal.py) builds each event's served record as it writes the event, to chain
it; once the unit of work has committed, it hands those records here, in the order they were numbered,
on the committing thread: a request's event loop, a worker's job thread or a sweep's. A follower must not
block that thread; it hands the records on (to its event loop, to a publishing thread). A unit of work
that rolled back tells nobody, and nothing is collected while nothing follows.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger("concord.events")

# One committed event: its stream's name ("topic:<id>", domain/kernel/events.py stream_of) and its served
# record (domain/kernel/event_record.py served), exactly as the events API serves it.
Committed = tuple[str, dict[str, Any]]
# A follower gets the events of one committed unit of work.
Follower = Callable[[Sequence[Committed]], None]

_followers: tuple[Follower, ...] = ()
_lock = threading.Lock()


def follow(follower: Follower) -> Callable[[], None]:
    """Hand every later commit's events to `follower`; answers the function that stops it."""
    global _followers
    with _lock:
        _followers = (*_followers, follower)

    def stop() -> None:
        global _followers
        with _lock:
            _followers = tuple(f for f in _followers if f is not follower)

    return stop


def following() -> bool:
    """Whether anything in the process follows committed events (else the journal collects nothing)."""
    return bool(_followers)


def tell(records: Sequence[Committed]) -> None:
    """Hand one committed unit of work's events to every follower. A follower that fails is logged, never
    raised: the unit of work has committed, and its writer must not see an error for it."""
    if not records:
        return
    for follower in _followers:
        try:
            follower(records)
        except Exception:
            log.exception("a follower of committed events failed")
