"""The Dramatiq broker chosen by settings: Redis in production, an in-process StubBroker otherwise."""

from __future__ import annotations

import dramatiq
import redis
from dramatiq.brokers.redis import RedisBroker
from dramatiq.brokers.stub import StubBroker
from dramatiq.middleware import AsyncIO

from domain.kernel.settings import Settings
from infra.metrics import process_metrics
from workers import actors
from workers.metrics import JobMetrics

_broker: dramatiq.Broker | None = None

# Queue maintenance (putting back the messages of workers whose heartbeat is older than
# CONCORD_WORKER_HEARTBEAT_TIMEOUT_SECONDS) runs on this many broker calls in a million; an idle worker calls
# about once a second per queue, so 20% finds a dead worker's messages within seconds of its timeout.
# Dramatiq's default (0.1%) left them for many minutes. Maintenance is two small range reads when no worker
# is dead.
MAINTENANCE_CHANCE = 200_000


def setup_broker(settings: Settings) -> dramatiq.Broker:
    """Create the process's broker once and declare the actors on it."""
    global _broker
    if _broker is not None:
        return _broker
    broker: dramatiq.Broker
    if settings.redis_url:
        # Every call bounded: a Redis that vanished without closing its connections fails a send (the relay
        # puts the jobs back) or a readiness check instead of hanging; stale connections are retried by the
        # client (redis-py retries connection errors on a new connection).
        client = redis.Redis.from_url(
            settings.redis_url,
            socket_connect_timeout=max(settings.redis_timeout_seconds, 5.0),
            socket_timeout=max(settings.redis_timeout_seconds, 10.0),
        )
        # dramatiq leaves RedisBroker.__init__ unannotated.
        broker = RedisBroker(  # type: ignore[no-untyped-call]
            client=client,
            namespace=settings.queue_namespace,
            heartbeat_timeout=int(settings.worker_heartbeat_timeout_seconds * 1000),
            maintenance_chance=MAINTENANCE_CHANCE,
        )
    else:
        broker = StubBroker()
        broker.emit_after("process_boot")
    broker.add_middleware(AsyncIO())
    broker.add_middleware(JobMetrics(process_metrics()))
    dramatiq.set_broker(broker)
    _broker = broker
    actors.declare(broker, settings)
    return broker


def is_embedded(broker: dramatiq.Broker) -> bool:
    return isinstance(broker, StubBroker)
