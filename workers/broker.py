"""The Dramatiq broker chosen by settings: Redis in production, an in-process StubBroker otherwise."""

from __future__ import annotations

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from dramatiq.brokers.stub import StubBroker
from dramatiq.middleware import AsyncIO

from domain.kernel.settings import Settings
from runtime.metrics import process_metrics
from workers import actors
from workers.metrics import JobMetrics

_broker: dramatiq.Broker | None = None


def setup_broker(settings: Settings) -> dramatiq.Broker:
    """Create the process's broker once and declare the actors on it."""
    global _broker
    if _broker is not None:
        return _broker
    broker: dramatiq.Broker
    if settings.redis_url:
        # dramatiq leaves RedisBroker.__init__ unannotated.
        broker = RedisBroker(url=settings.redis_url, namespace=settings.queue_namespace)  # type: ignore[no-untyped-call]
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
