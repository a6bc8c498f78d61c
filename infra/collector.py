"""The cyclic garbage collector of a long-running process: off while it starts, then rarer.

CPython runs a young collection after every 700 net allocations of container objects and walks every
object that survived into the older generations now and then. A Concord process keeps tens of thousands of
objects for its whole life (modules, pydantic models and their validators, SQLAlchemy tables and compiled
statements, the apps' routes), and a request allocates a few thousand that die with it, most never part of
a cycle: with the defaults the collector spends its time walking objects that are not garbage (about a
tenth of a test worker's CPU, half of that in full collections, docs/decisions.md "The garbage collector").

So a serving process (`concord serve`/`web`/`scheduler`, a `concord worker` process) pauses the collector
while it imports and builds what it keeps (`pause`), then collects once, freezes what is left out of every
later collection (`gc.freeze`) and turns the collector back on with young collections every
`THRESHOLDS[0]` allocations (`settle`). Garbage in cycles is still collected, a little later; objects that
are not in a cycle are freed by reference counting as before, whatever the collector does.
"""

from __future__ import annotations

import gc

# A young collection every 50,000 net container allocations (CPython: 700), the middle generation every 10
# of those, the old one every 10 of the middle's (and, as always, only once a quarter of the old generation
# is new since the last full collection).
THRESHOLDS = (50_000, 10, 10)

_settled = False


def pause() -> None:
    """Until `settle`: what is built now lives as long as the process."""
    gc.disable()


def settle() -> None:
    """Collect what starting left behind, freeze the rest, and collect from now on at THRESHOLDS. A second
    call only turns the collector on again (when a `pause` turned it off)."""
    global _settled
    if not _settled:
        _settled = True
        gc.collect()
        gc.freeze()
        gc.set_threshold(*THRESHOLDS)
    gc.enable()
