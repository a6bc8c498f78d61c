"""How the events one process commits reach the web processes of other machines and processes: Redis pub/sub.

Every process that commits (web processes, the scheduler, `concord worker` processes) publishes each
committed unit of work's events, records and all, on one channel per queue namespace
(`<namespace>:events`), from a thread of its own: the committing thread only appends to a bounded list, so
a slow or absent Redis never holds up a commit. Each web process with listeners holds one subscription and
hands what arrives to its hub (infra/live/hub.py), which delivers to every listener of the stream; so an
event costs one message per listening web process, whatever the number of listeners.

Nothing here has to be exactly once or in order: the hub delivers an event only after every earlier one of
its stream, reads from the database whatever it heard of but missed (a message lost while Redis was away,
one that overtook another), and drops what it has delivered already. Messages carry their sender's
`ORIGIN`, so that a process ignores its own (its listeners had them directly).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence

import redis
import redis.asyncio
from redis.exceptions import RedisError

from domain.kernel import event_feed
from domain.kernel.settings import Settings
from domain.kernel.tasks import cancel_and_wait

log = logging.getLogger("concord.live")

# This process, as the sender of its messages: drawn again in a forked child (web and worker processes are
# forked from a parent that imported this module, infra/forked.py), or every sibling would take the others'
# messages for its own and ignore them.
ORIGIN = ""
# Units of work waiting for the publishing thread; beyond this the oldest are dropped (Redis away): the
# listeners' hubs read what they missed from the database.
MAX_WAITING = 10_000
RETRY_SECONDS = 1.0
# A subscription asks Redis whether it is still there this often when nothing arrives.
SUBSCRIPTION_CHECK_SECONDS = 5.0
# A publisher asks Redis whether any process is subscribed (PUBSUB NUMSUB) at most this often, and publishes
# nothing while none is: web processes subscribe only while they have listeners (infra/live/hub.py). A
# subscription that starts reads the followed streams' counters at once and again after this long, so a
# commit a publisher left unpublished while it still believed nobody listened is read from the database.
LISTENERS_FRESH_SECONDS = 0.5


def channel(settings: Settings) -> str:
    return f"{settings.queue_namespace}:events"


def encode(events: Sequence[event_feed.Committed]) -> bytes:
    return json.dumps({"origin": ORIGIN, "events": [list(e) for e in events]}, separators=(",", ":")).encode()


# How every message this process sends begins (`encode`: the origin first, no spaces).
_OWN = b""


def _new_origin() -> None:
    global ORIGIN, _OWN
    ORIGIN = uuid.uuid4().hex
    _OWN = encode([])[: -len(',"events":[]}')]


_new_origin()
os.register_at_fork(after_in_child=_new_origin)


def decode(message: bytes) -> list[event_feed.Committed] | None:
    """The events of another process's message (None: this process's own, or not a message of ours)."""
    if message.startswith(_OWN):
        return None  # its listeners had them directly: not even parsed
    try:
        body = json.loads(message)
        if body["origin"] == ORIGIN:
            return None
        return [(str(stream), dict(record)) for stream, record in body["events"]]
    except (ValueError, KeyError, TypeError):
        log.warning("live events: ignored a message that is not one of Concord's")
        return None


class RedisPublisher:
    """Publishes every committed unit of work's events of this process, from a thread of its own."""

    def __init__(self, settings: Settings) -> None:
        assert settings.redis_url
        self._client = redis.Redis.from_url(
            settings.redis_url,
            socket_connect_timeout=settings.redis_timeout_seconds,
            socket_timeout=settings.redis_timeout_seconds,
        )
        self._channel = channel(settings)
        self._waiting: deque[bytes] = deque(maxlen=MAX_WAITING)
        self._wake = threading.Event()
        self._stopping = False
        # Whether a process was subscribed when Redis was last asked, and until when that answer holds.
        self._listened = True
        self._fresh_until = 0.0
        self.sent = 0  # messages published
        self._thread = threading.Thread(target=self._run, name="concord-live-publisher", daemon=True)
        self._stop_following: Callable[[], None] | None = None

    def start(self) -> None:
        self._thread.start()
        self._stop_following = event_feed.follow(self.committed)

    def committed(self, events: Sequence[event_feed.Committed]) -> None:
        """On the committing thread: encode and queue (a deque's append is atomic); nothing while Redis said
        lately that no process is subscribed."""
        if not self._listened and time.monotonic() < self._fresh_until:
            return
        self._waiting.append(encode(events))
        self._wake.set()

    def _anyone_listens(self) -> bool:
        """Whether any process is subscribed to the channel (asked of Redis at most every
        LISTENERS_FRESH_SECONDS)."""
        now = time.monotonic()
        if now >= self._fresh_until:
            [(_channel, subscribed)] = self._client.pubsub_numsub(self._channel)
            self._listened = int(subscribed) > 0
            self._fresh_until = now + LISTENERS_FRESH_SECONDS
        return self._listened

    def _run(self) -> None:
        failing = False
        while not self._stopping:
            self._wake.wait()
            self._wake.clear()
            while self._waiting and not self._stopping:
                batch = [self._waiting.popleft() for _ in range(min(len(self._waiting), 100))]
                try:
                    if not self._anyone_listens():
                        continue  # committed before anyone subscribed: a new subscriber reads them
                    with self._client.pipeline(transaction=False) as pipe:
                        for message in batch:
                            pipe.publish(self._channel, message)
                        pipe.execute()
                    self.sent += len(batch)
                except (RedisError, OSError) as exc:
                    if not failing:
                        log.warning(
                            "live events: cannot publish to Redis (%s); other processes' listeners catch up "
                            "from the database",
                            exc,
                        )
                    failing = True
                    self._waiting.clear()  # read from the database by whoever missed them
                    self._wake.wait(RETRY_SECONDS)
                else:
                    if failing:
                        log.info("live events: publishing to Redis again")
                    failing = False

    def stop(self) -> None:
        if self._stop_following is not None:
            self._stop_following()
        self._stopping = True
        self._wake.set()
        self._thread.join(timeout=5)
        self._client.close()


class RedisSubscription:
    """One web process's subscription: hands every other process's events to `deliver`, and calls
    `connected` each time the subscription (re)starts, since what was published meanwhile never arrives."""

    def __init__(
        self,
        settings: Settings,
        deliver: Callable[[list[event_feed.Committed]], None],
        connected: Callable[[], None],
        wanted: Callable[[], bool] = lambda: True,
    ) -> None:
        assert settings.redis_url
        self._url = settings.redis_url
        self._timeout = settings.redis_timeout_seconds
        self._channel = channel(settings)
        self._deliver = deliver
        self._connected = connected
        self._wanted = wanted  # False: nobody here listens, so what arrives is not even decoded
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="concord-live-subscription")

    async def _run(self) -> None:
        # redis-py can turn a cancellation that lands inside its connect into a connection error (or swallow
        # it): the loop asks the task whether it was cancelled wherever it would otherwise go on.
        task = asyncio.current_task()
        assert task is not None
        failing = False
        while not task.cancelling():
            client = redis.asyncio.Redis.from_url(
                self._url,
                socket_connect_timeout=self._timeout,
                health_check_interval=SUBSCRIPTION_CHECK_SECONDS,
            )
            try:
                async with client.pubsub(ignore_subscribe_messages=True) as pubsub:
                    await pubsub.subscribe(self._channel)
                    await pubsub.get_message(timeout=self._timeout)  # the subscription's confirmation
                    if failing:
                        log.info("live events: subscribed to Redis again")
                    failing = False
                    self._connected()
                    while not task.cancelling():
                        message = await pubsub.get_message(timeout=SUBSCRIPTION_CHECK_SECONDS)
                        if message is not None and message.get("type") == "message" and self._wanted():
                            events = decode(message["data"])
                            if events:
                                self._deliver(events)
            except (RedisError, OSError) as exc:
                if task.cancelling():
                    break
                if not failing:
                    log.warning(
                        "live events: the Redis subscription failed (%s); retrying every %g s, while event "
                        "streams catch up from the database",
                        exc,
                        RETRY_SECONDS,
                    )
                failing = True
            finally:
                with contextlib.suppress(RedisError, OSError):
                    await client.aclose()
            if not task.cancelling():
                await asyncio.sleep(RETRY_SECONDS)
        raise asyncio.CancelledError

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None
