"""One web process's fan-out of committed events to the listeners of their streams.

A listener follows one stream (`listen`). The hub keeps, per followed stream, the last sequence number it has
delivered (`known`, read from the stream's counter when the first listener arrives) and hands each later
event to every listener of the stream, in order and once: an event that arrives ahead of one it has not
delivered yet waits (`ahead`) while the gap is read from the database, one read per stream and gap for the
whole process, never per listener. Sequence numbers are gap-free and a stream's writers commit in their
order (the counter's row lock is held to the commit), so once event n has committed every event before it
has, and can be read.

Events arrive three ways: this process's own commits directly (domain/kernel/event_feed.py, on the
committing thread, handed to the loop); other processes' through Redis (infra/live/transport.py; the process
is subscribed while it has listeners, `_subscribed_while_followed`) or, without Redis, as a change of the
machine's commit counters (infra/machine.py), on which the hub compares
the counters of its streams with what it delivered; and every `sse_check_seconds` that same comparison
catches what no notice announced (a `concord` command's events, a message lost while Redis was away).

A listener's queue is bounded (`sse_queue_events`): one that fills (its client reads slower than events
come) is ended, its queue dropped, so that it never holds up the others; its client resumes from its last
event. Delivering is appending one shared `LiveEvent` to each listener's queue: the SSE bytes of an event
are made once per process (web/kernel/sse.py), not once per listener.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from domain.kernel import event_feed, events
from domain.kernel.db import Database
from domain.kernel.errors import RateLimited, Unavailable
from domain.kernel.settings import Settings
from domain.kernel.tasks import cancel_and_wait
from infra.live.transport import LISTENERS_FRESH_SECONDS, RedisSubscription
from infra.machine import SharedGeneration

log = logging.getLogger("concord.live")

# How often a web process with listeners looks at the machine's commit counters (no Redis): the longest a
# commit in another process of the machine waits before this one reads its events.
MACHINE_POLL_SECONDS = 0.02
# With Redis, how long a process stays subscribed after its last listener left (a client that reconnects at
# once finds the subscription still there).
UNSUBSCRIBE_AFTER_SECONDS = 30.0
# Events read from the database at a time when filling a gap.
READ_PAGE = 200
# Events held per stream while an earlier one is read; beyond this they are read from the database too.
MAX_AHEAD = 1000


@dataclass(eq=False, slots=True)
class LiveEvent:
    """One event as the listeners get it: its record exactly as the events API serves it, and the encoding
    the web layer makes of it once for all of them (`encoded`)."""

    seq: int
    type: str
    record: dict[str, Any]
    encoded: bytes | None = None

    @classmethod
    def of(cls, record: dict[str, Any]) -> LiveEvent:
        return cls(int(record["sequenceNumber"]), str(record["type"]), record)


class Tick:
    """A heartbeat: a listener that got no event since the last one sends its keep-alive."""


TICK = Tick()
Item = LiveEvent | Tick


class Ended(StrEnum):
    """Why a listener's stream ended (the hub ends it for the first two)."""

    SLOW = "slow"  # its queue filled
    SHUTDOWN = "shutdown"  # the process is stopping
    CLIENT = "client"  # its client went away
    LIFETIME = "lifetime"  # it lasted CONCORD_SSE_MAX_SECONDS
    ERROR = "error"  # it failed (logged)


class Listener:
    """One stream's listener with a bounded queue (an SSE connection)."""

    __slots__ = ("stream", "_limit", "_queue", "_ready", "ended")

    def __init__(self, stream: str, limit: int) -> None:
        self.stream = stream
        self._limit = limit
        self._queue: deque[Item] = deque()
        self._ready = asyncio.Event()
        self.ended: Ended | None = None

    def push(self, item: Item) -> None:
        if self.ended is not None:
            return
        if len(self._queue) >= self._limit:
            self.end(Ended.SLOW)
            return
        self._queue.append(item)
        self._ready.set()

    def end(self, why: Ended) -> None:
        if self.ended is None:
            self.ended = why
            self._queue.clear()
            self._ready.set()

    async def take(self) -> list[Item] | None:
        """Everything queued, waiting for something first; None once the hub has ended the listener."""
        while not self._queue:
            if self.ended is not None:
                return None
            self._ready.clear()
            await self._ready.wait()
        if self.ended is not None:
            return None
        items = list(self._queue)
        self._queue.clear()
        return items


class Watcher:
    """A listener that is called for each event instead of queueing it (the MCP document watcher)."""

    __slots__ = ("stream", "_call", "ended")

    def __init__(self, stream: str, call: Callable[[LiveEvent], None]) -> None:
        self.stream = stream
        self._call = call
        self.ended: Ended | None = None

    def push(self, item: Item) -> None:
        if isinstance(item, LiveEvent) and self.ended is None:
            self._call(item)

    def end(self, why: Ended) -> None:
        self.ended = why


Follower = Listener | Watcher


class _Stream:
    __slots__ = ("name", "followers", "known", "heard", "ahead", "reading", "ready")

    def __init__(self, name: str) -> None:
        self.name = name
        self.followers: set[Follower] = set()
        self.known = -1  # the last sequence number delivered; -1 until read from the counter
        self.heard = 0  # the highest sequence number heard of
        self.ahead: dict[int, LiveEvent] = {}
        self.reading: asyncio.Task[None] | None = None
        self.ready: asyncio.Task[None] | None = None  # reads `known`


class LiveEvents:
    """The process's fan-out (one per process, shared by both apps through the runtime)."""

    def __init__(self, db: Database, settings: Settings, machine: SharedGeneration | None = None) -> None:
        self.db = db
        self.settings = settings
        self.machine = machine if not settings.redis_url else None
        self._streams: dict[str, _Stream] = {}
        self._open = 0
        self._by_client: dict[str, int] = {}  # open streams by client (credential or address)
        self._closing = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._stop_following: Callable[[], None] | None = None
        self._followed = asyncio.Event()  # set while any stream has followers
        self._unfollowed = asyncio.Event()  # and this while none has
        self._unfollowed.set()
        self._check_running = False
        self._check_again = False
        self._soon: set[asyncio.Task[None]] = set()

    # ---- life ----

    @property
    def started(self) -> bool:
        return self._loop is not None

    async def start(self) -> None:
        """Start receiving (idempotent: both apps of a process start it)."""
        if self._loop is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._closing = False
        self._stop_following = event_feed.follow(self._committed_here)
        self._tasks = [
            asyncio.create_task(self._heartbeats(), name="concord-live-heartbeats"),
            asyncio.create_task(self._checks(), name="concord-live-checks"),
        ]
        if self.settings.redis_url:
            self._tasks.append(
                asyncio.create_task(self._subscribed_while_followed(), name="concord-live-subscribing")
            )
        if self.machine is not None:
            self._tasks.append(asyncio.create_task(self._watch_machine(), name="concord-live-machine"))

    async def _subscribed_while_followed(self) -> None:
        """With Redis, the process holds its subscription only while a stream here has followers, and for
        UNSUBSCRIBE_AFTER_SECONDS after the last one left: a web process nobody listens to is not sent every
        unit of work the others commit (parsing them was a few percent of a write's CPU). A subscription
        that starts calls `check_soon`, so what was published before it was in place is read from the
        database, as after a reconnection."""
        while True:
            await self._followed.wait()
            subscription = RedisSubscription(
                self.settings, self._received, self._subscribed, wanted=lambda: bool(self._streams)
            )
            subscription.start()
            try:
                while True:
                    await self._unfollowed.wait()
                    try:
                        async with asyncio.timeout(UNSUBSCRIBE_AFTER_SECONDS):
                            await self._followed.wait()  # followed again meanwhile: stay subscribed
                    except TimeoutError:
                        break
            finally:
                await subscription.stop()

    def _subscribed(self) -> None:
        """The subscription (re)started: what was published before it never arrives, and a publisher may
        have left a commit unpublished for LISTENERS_FRESH_SECONDS more, believing nobody listened; so the
        counters are compared now and once that is over."""
        self.check_soon()
        if self._loop is not None:
            self._loop.call_later(LISTENERS_FRESH_SECONDS + 0.1, self.check_soon)

    def close(self) -> None:
        """End every listener (the process is stopping): their clients reconnect, to another process."""
        self._closing = True
        for stream in list(self._streams.values()):
            for follower in list(stream.followers):
                follower.end(Ended.SHUTDOWN)

    async def stop(self) -> None:
        self.close()
        if self._stop_following is not None:
            self._stop_following()
            self._stop_following = None
        for task in [*self._tasks, *self._soon]:  # the subscribing task stops its subscription
            await cancel_and_wait(task)
        for stream in self._streams.values():
            for pending in (stream.ready, stream.reading):
                if pending is not None and not pending.done():
                    await cancel_and_wait(pending)
        self._tasks = []
        self._streams.clear()
        self._loop = None

    # ---- listeners ----

    @property
    def open_streams(self) -> int:
        return self._open

    @contextlib.contextmanager
    def admitted(self, client: str) -> Iterator[None]:
        """Hold one of the process's `sse_max_connections` places, and one of the `sse_max_per_client` of
        `client` (who asks: its credential, or its address), for the life of a connection."""
        if self._closing or self._loop is None:
            raise Unavailable("this process is stopping; reconnect", retry_after=1)
        held = self._by_client.get(client, 0)
        if held >= self.settings.sse_max_per_client:
            raise RateLimited(
                f"this client already holds {held} event streams on this process (at most "
                f"{self.settings.sse_max_per_client}); close one, or follow several resources' events from "
                "one place",
                retry_after=2,
            )
        if self._open >= self.settings.sse_max_connections:
            raise Unavailable(
                f"this process already serves its {self.settings.sse_max_connections} event streams; try "
                "again shortly",
                retry_after=2,
            )
        self._open += 1
        self._by_client[client] = held + 1
        try:
            yield
        finally:
            self._open -= 1
            left = self._by_client[client] - 1
            if left:
                self._by_client[client] = left
            else:
                del self._by_client[client]

    async def listen(self, stream: str) -> Listener:
        """A listener of `stream` that gets every event after those the stream had when it arrived (and
        perhaps a few before: the caller drops what it has sent already)."""
        listener = Listener(stream, self.settings.sse_queue_events)
        await self._follow(listener)
        return listener

    async def watch(self, stream: str, call: Callable[[LiveEvent], None]) -> Watcher:
        """Call `call` (on the loop) for every later event of `stream`, until `leave`."""
        watcher = Watcher(stream, call)
        await self._follow(watcher)
        return watcher

    async def _follow(self, follower: Follower) -> None:
        if self._closing or self._loop is None:
            raise Unavailable("this process is stopping; reconnect", retry_after=1)
        state = self._streams.get(follower.stream)
        if state is None:
            state = self._streams[follower.stream] = _Stream(follower.stream)
            self._followed.set()
            self._unfollowed.clear()
            # A task of its own: the first follower going away does not stop the others' start.
            state.ready = asyncio.create_task(self._start_stream(state))
        state.followers.add(follower)
        assert state.ready is not None
        try:
            await asyncio.shield(state.ready)
        except BaseException:
            self.leave(follower)
            raise

    async def _start_stream(self, state: _Stream) -> None:
        async with self.db.read() as session:
            last = await events.last_numbers(session, [state.name])
        state.known = last.get(state.name, 0)
        self._advance(state)

    def leave(self, follower: Follower) -> None:
        state = self._streams.get(follower.stream)
        if state is not None:
            state.followers.discard(follower)
            if not state.followers:
                self._forget(state)

    def _forget(self, state: _Stream) -> None:
        if self._streams.get(state.name) is state:
            del self._streams[state.name]
        if not self._streams:
            self._followed.clear()
            self._unfollowed.set()

    # ---- events in ----

    def _committed_here(self, committed: Sequence[event_feed.Committed]) -> None:
        """A commit of this process, on its committing thread (a request's loop, a job's thread)."""
        loop = self._loop
        if loop is None or not self._streams:
            # Nothing followed: a stream followed from now on starts after this commit (its counter is read
            # after the follower is registered, and this commit is in it).
            return
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody listens any more
            loop.call_soon_threadsafe(self._received, list(committed))

    def _received(self, committed: list[event_feed.Committed]) -> None:
        for stream, record in committed:
            state = self._streams.get(stream)
            if state is not None:
                event = LiveEvent.of(record)
                self._heard(state, event.seq, event)

    def _heard(self, state: _Stream, seq: int, event: LiveEvent | None) -> None:
        if seq <= state.known:
            return  # delivered already
        state.heard = max(state.heard, seq)
        if event is not None and len(state.ahead) < MAX_AHEAD:
            state.ahead[seq] = event
        self._advance(state)

    def _advance(self, state: _Stream) -> None:
        """Deliver what can be delivered in order; read the rest from the database."""
        if state.known < 0 or state.reading is not None:
            return
        while (event := state.ahead.pop(state.known + 1, None)) is not None:
            self._deliver(state, event)
        if state.ahead:
            for seq in [seq for seq in state.ahead if seq <= state.known]:
                del state.ahead[seq]
        if state.heard > state.known:
            state.reading = asyncio.create_task(self._read(state))

    async def _read(self, state: _Stream) -> None:
        """Read the events between what was delivered and what was heard of, and deliver them."""
        try:
            while state.heard > state.known and self._streams.get(state.name) is state:
                async with self.db.read() as session:
                    page = await events.page(session, state.name, after=state.known, limit=READ_PAGE)
                if not page.events:
                    state.heard = state.known  # nothing committed beyond it; a later notice says again
                    break
                for record in page.events:
                    event = state.ahead.pop(int(record["sequenceNumber"]), None) or LiveEvent.of(record)
                    self._deliver(state, event)
        except Exception:
            log.warning(
                "live events: reading %s failed; the next check tries again", state.name, exc_info=True
            )
            state.reading = None
            return
        state.reading = None
        self._advance(state)

    def _deliver(self, state: _Stream, event: LiveEvent) -> None:
        state.known = event.seq
        for follower in list(state.followers):
            follower.push(event)

    # ---- checks ----

    def check_soon(self) -> None:
        """Compare the followed streams' counters with what was delivered, soon (a subscription restarted)."""
        if self._loop is not None and self._streams:
            task = asyncio.create_task(self._check_logged())
            self._soon.add(task)  # referenced until done (the loop keeps only a weak reference)
            task.add_done_callback(self._soon.discard)

    async def _check_logged(self) -> None:
        try:
            await self.check()
        except Exception:
            log.warning("live events: checking the streams' counters failed", exc_info=True)

    async def check(self) -> None:
        """Hear of every followed stream's last event from its counter (one statement for all of them)."""
        if self._check_running:
            self._check_again = True
            return
        self._check_running = True
        try:
            while True:
                self._check_again = False
                names = list(self._streams)
                if not names:
                    return
                async with self.db.read() as session:
                    last = await events.last_numbers(session, names)
                for name, seq in last.items():
                    state = self._streams.get(name)
                    if state is not None:
                        self._heard(state, seq, None)
                if not self._check_again:
                    return
        finally:
            self._check_running = False

    async def _checks(self) -> None:
        while True:
            await self._followed.wait()
            await asyncio.sleep(self.settings.sse_check_seconds)
            try:
                await self.check()
            except Exception:
                log.warning("live events: checking the streams' counters failed", exc_info=True)

    async def _watch_machine(self) -> None:
        """Without Redis, under the supervisor: another process of the machine committed, so look at the
        counters of the followed streams (a commit of this process reached its listeners directly)."""
        machine = self.machine
        assert machine is not None
        seen = machine.others()
        while True:
            await self._followed.wait()
            await asyncio.sleep(MACHINE_POLL_SECONDS)
            now = machine.others()
            if now == seen:
                continue
            seen = now
            try:
                await self.check()
            except Exception:
                log.warning("live events: checking the streams' counters failed", exc_info=True)

    async def _heartbeats(self) -> None:
        while True:
            await self._followed.wait()
            await asyncio.sleep(self.settings.sse_heartbeat_seconds)
            for state in list(self._streams.values()):
                for follower in list(state.followers):
                    follower.push(TICK)
