"""Operations: Prometheus metrics at /metrics on both apps, access logs and JSON logs with the request id, and
requests aiohttp cannot parse answered in the app's error format with one WARNING line.

In-process tests scrape the test process's own metrics (one set per process, shared by every app of it), so
they compare a scrape after with a scrape before. The served test runs `concord serve --processes 2` and
asserts exact values added up over its processes."""

from __future__ import annotations

import asyncio
import functools
import importlib.metadata
import io
import json
import logging
import os
import platform
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiohttp
import dramatiq
import pytest
from dramatiq.brokers.stub import StubBroker
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import delete, select

from domain.documents import library
from domain.kernel import outbox
from domain.kernel.models import OutboxJob
from infra import logs
from infra.metrics import FLUSH_SECONDS, Metrics, queue_depths
from tests.conftest import REDIS_URL, RUN_ID
from tests.documents_support import make_key, upload, upload_ready
from tests.processes import command, free_port, ready, served, start, stop
from tests.waiting import eventually
from workers.metrics import JobMetrics

TOPIC_ROUTE = "/api/pact/{topicId}"
CONVERT = library.CONVERT_JOB.name


@functools.lru_cache(maxsize=8)
def parse(text: str) -> tuple[tuple[str, dict[str, str], float], ...]:
    """The samples of a scrape, parsed once however many values a test reads from it (a worker's scrape late
    in a run holds every route it served, and the parser is pure Python)."""
    return tuple(
        (s.name, s.labels, s.value) for family in text_string_to_metric_families(text) for s in family.samples
    )


def value(text: str, name: str, **labels: str) -> float:
    """The sum of the samples called `name` whose labels include `labels` (0 when there is none)."""
    return sum(
        v for n, lab, v in parse(text) if n == name and all(lab.get(k) == w for k, w in labels.items())
    )


async def scrape(client: Any, headers: dict[str, str] | None = None) -> str:
    resp = await client.get("/metrics", headers=headers or {})
    assert resp.status == 200, await resp.text()
    assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    return str(await resp.text())


async def test_requests_are_counted_by_route_template_and_status(hub, docs):
    before = await scrape(hub)
    for _ in range(3):
        assert (await hub.get(f"/api/pact/{uuid.uuid4()}")).status == 404  # a topic that does not exist
    assert (await hub.get("/healthz")).status == 200
    assert (await hub.get(f"/no/such/{uuid.uuid4()}")).status == 404
    assert (await docs.get("/healthz")).status == 200
    after = await scrape(hub)
    delta = lambda name, **labels: value(after, name, **labels) - value(before, name, **labels)  # noqa: E731

    topic = {"app": "hub", "method": "GET", "route": TOPIC_ROUTE}
    assert delta("concord_http_requests_total", **topic, status="404") == 3
    assert delta("concord_http_request_duration_seconds_count", **topic) == 3
    # Latencies by status class (a 404 answered fast is not a slow 200): bounded, 5 classes at most.
    assert delta("concord_http_request_duration_seconds_count", **topic, status="4xx") == 3
    assert delta("concord_http_request_duration_seconds_count", **topic, status="2xx") == 0
    assert delta("concord_http_request_duration_seconds_bucket", **topic, le="+Inf") == 3
    assert delta("concord_http_requests_total", app="hub", route="/healthz", status="200") == 1
    assert delta("concord_http_requests_total", app="hub", route="unmatched", status="404") == 1
    assert delta("concord_http_requests_total", app="documents", route="/healthz", status="200") == 1
    routes = {lab.get("route") for n, lab, _ in parse(after) if n == "concord_http_requests_total"}
    assert not [r for r in routes if r and "/no/such" in r]  # raw paths never become labels
    # Both apps answer /metrics with the process's metrics.
    assert value(await scrape(docs), "concord_http_requests_total", app="hub", route=TOPIC_ROUTE) >= 3
    # Scrapes are not requests of the API: a scrape every 15 s would otherwise be most of an idle app's count.
    for name in ("concord_http_requests_total", "concord_http_request_duration_seconds_count"):
        assert value(await scrape(hub), name, route="/metrics") == 0


async def test_requests_reach_the_samples_within_the_flush_interval_without_a_scrape():
    """Requests are added to the shared samples in batches: within FLUSH_SECONDS of the first one, even when
    this process answers no scrape (in multiprocess mode another process may answer it)."""
    metrics = Metrics(None)
    metrics.request("hub", "GET", "/x", 200, 0.003)
    metrics.request("hub", "GET", "/x", 200, 0.2)
    metrics.request("hub", "BREW", "/x", 404, 0.001)
    unflushed = generate_latest(metrics.registry).decode()  # the registry itself: no flush before it
    assert value(unflushed, "concord_http_requests_total") == 0
    await asyncio.sleep(FLUSH_SECONDS + 0.2)
    text = generate_latest(metrics.registry).decode()
    assert value(text, "concord_http_requests_total", route="/x", method="GET", status="200") == 2
    assert value(text, "concord_http_requests_total", route="/x", method="other", status="404") == 1
    assert value(text, "concord_http_request_duration_seconds_count", method="GET") == 2
    assert value(text, "concord_http_request_duration_seconds_count", method="GET", status="2xx") == 2
    assert value(text, "concord_http_request_duration_seconds_count", method="other", status="4xx") == 1
    assert value(text, "concord_http_request_duration_seconds_sum", method="GET") == pytest.approx(0.203)
    assert value(text, "concord_http_request_duration_seconds_bucket", method="GET", le="0.005") == 1


async def test_a_flush_writes_each_bucket_once_and_samples_as_one_observation_at_a_time_would():
    """A flush adds its requests' durations to the histogram one bucket write each (multiprocess mode: one
    locked write to a memory-mapped file per bucket touched, not two per request): the samples are those of
    observing every duration in turn, bounds included (a duration equal to a bound falls in that bucket)."""
    durations = [0.0004, 0.001, 0.0011, 0.003, 0.003, 0.2, 0.25, 7.0, 45.0, 0.05]
    batched = Metrics(None)
    one_by_one = Metrics(None)
    for seconds in durations:
        batched.request("hub", "GET", "/x", 200, seconds)
        one_by_one.request_seconds.labels("hub", "GET", "/x", "2xx").observe(seconds)
        one_by_one.requests.labels("hub", "GET", "/x", "200").inc()
    batched.flush()
    histogram = "concord_http_request_duration_seconds"
    mine, theirs = (
        parse(generate_latest(batched.registry).decode()),
        parse(generate_latest(one_by_one.registry).decode()),
    )
    wanted = [
        (n, lab, v)
        for n, lab, v in theirs
        if (n.startswith(histogram) or n == "concord_http_requests_total") and not n.endswith("_created")
    ]
    assert wanted
    assert [s for s in mine if s in wanted] == wanted
    assert value(generate_latest(batched.registry).decode(), f"{histogram}_bucket", le="0.001") == 2
    assert value(generate_latest(batched.registry).decode(), f"{histogram}_count") == len(durations)


def test_a_flush_left_on_a_closed_loop_does_not_strand_later_requests():
    """A loop that closes before its flush runs (a test's app, a restarted server) leaves its requests
    pending: the next loop's first request schedules a flush of them all."""
    metrics = Metrics(None)

    async def one() -> None:
        metrics.request("hub", "GET", "/x", 200, 0.001)

    async def another() -> None:
        metrics.request("hub", "GET", "/x", 200, 0.001)
        await asyncio.sleep(FLUSH_SECONDS + 0.2)

    asyncio.run(one())  # closed at once, its flush never ran
    asyncio.run(another())
    assert value(generate_latest(metrics.registry).decode(), "concord_http_requests_total") == 2


async def test_process_build_broker_and_pool_metrics(hub, docs, runtime, settings):
    """What an operator needs beside the requests: the process's own CPU, memory and file descriptors, the
    build it runs, whether the broker answers, whether rate limits fell back, and the database pool."""
    text = await scrape(hub)
    assert value(text, "process_resident_memory_bytes") > 10_000_000
    assert value(text, "process_cpu_seconds_total") > 0
    assert 0 < value(text, "process_open_fds") < value(text, "process_max_fds")
    assert value(text, "process_start_time_seconds") > 1_700_000_000
    (build,) = [lab for n, lab, v in parse(text) if n == "concord_build_info" and v == 1]
    assert build["version"] == importlib.metadata.version("concord")
    assert build["python"] == platform.python_version()
    assert build["revision"] == (settings.build_revision or "unknown")
    assert value(text, "concord_broker_up") == 1
    for client, app in ((hub, "hub"), (docs, "documents")):
        assert value(await scrape(client), "concord_rate_limits_fallback", app=app) == 0
    pool = {"pool": "main"}
    size = 16 if settings.is_sqlite else settings.db_pool_size
    assert value(text, "concord_db_pool_size", **pool) == size
    assert value(text, "concord_db_pool_max_overflow", **pool) == (
        0 if settings.is_sqlite else settings.db_max_overflow
    )
    async with runtime.db.transaction() as session:  # a connection checked out while the scrape runs
        await session.execute(select(1))
        held = await scrape(hub)
    assert value(held, "concord_db_pool_checked_out", **pool) >= 1
    assert value(held, "concord_db_pool_overflow", **pool) == 0

    async def returned() -> bool:
        return value(await scrape(hub), "concord_db_pool_checked_out", **pool) == 0

    await eventually(returned)


async def test_a_job_is_counted_with_its_duration_and_the_outbox_is_measured(docs, runtime):
    key = await make_key(runtime)
    before = await scrape(docs)
    await upload_ready(docs, key, b"# Metrics\n\nCounted.\n", "metrics.md")

    async def job_counted() -> str | None:
        text = await scrape(docs)
        done = value(text, "concord_jobs_total", actor=CONVERT, outcome="done")
        return text if done > value(before, "concord_jobs_total", actor=CONVERT, outcome="done") else None

    after = await eventually(job_counted)
    assert value(after, "concord_job_duration_seconds_count", actor=CONVERT) > value(
        before, "concord_job_duration_seconds_count", actor=CONVERT
    )
    assert value(after, "concord_outbox_jobs", status="pending") == 0
    assert value(after, "concord_outbox_oldest_pending_seconds") == 0
    states = {lab["state"] for n, lab, _ in parse(after) if n == "concord_queue_messages"}
    assert states == {"ready", "delayed", "dead"}


async def test_outbox_lag_is_the_age_of_the_oldest_pending_job(docs, runtime, clock):
    await runtime.relay.stop()  # nothing hands the jobs to the broker: they stay pending
    async with runtime.db.transaction() as session:
        for _ in range(2):
            outbox.enqueue(session, library.CONVERT_JOB, {"documentId": "none"})
    clock.advance(timedelta(minutes=10))
    async with runtime.db.transaction() as session:
        outbox.enqueue(session, library.CONVERT_JOB, {"documentId": "none"})
    text = await scrape(docs)
    assert value(text, "concord_outbox_jobs", status="pending") == 3
    assert 600 <= value(text, "concord_outbox_oldest_pending_seconds") < 660
    assert 600 <= value(text, "concord_outbox_oldest_unfinished_seconds") < 660
    async with runtime.db.transaction() as session:  # not run by the worker when the next test relays
        await session.execute(delete(OutboxJob))


async def test_metrics_token_when_set(hub, docs, settings, monkeypatch):
    monkeypatch.setattr(settings, "metrics_token", "s3cret-metrics-token")
    resp = await hub.get("/metrics")
    assert resp.status == 401
    assert (await resp.json())["error"] == "unauthorized"
    resp = await docs.get("/metrics", headers={"Authorization": "Bearer wrong-token-wrong-token"})
    assert resp.status == 401
    assert resp.content_type == "application/problem+json"
    text = await scrape(hub, {"Authorization": "Bearer s3cret-metrics-token"})
    assert "concord_http_requests_total" in text


def test_job_outcomes_on_a_real_worker():
    """done, failed (each failing attempt) and dead (retries exhausted), on a broker and worker of their
    own."""
    broker = StubBroker()
    broker.emit_after("process_boot")
    metrics = Metrics(None)
    broker.add_middleware(JobMetrics(metrics))

    @dramatiq.actor(broker=broker, actor_name="probe.ok", queue_name="probe")
    def ok() -> None:
        pass

    @dramatiq.actor(broker=broker, actor_name="probe.boom", queue_name="probe", max_retries=1, min_backoff=1)
    def boom() -> None:
        raise ValueError("always")

    worker = dramatiq.Worker(broker, worker_timeout=50, worker_threads=1)
    worker.start()
    try:
        ok.send()
        ok.send()
        boom.send()
        broker.join("probe", fail_fast=False)
        worker.join()
    finally:
        worker.stop()
    text = metrics.samples().decode()
    assert value(text, "concord_jobs_total", actor="probe.ok", outcome="done") == 2
    assert value(text, "concord_jobs_total", actor="probe.boom", outcome="failed") == 2
    assert value(text, "concord_jobs_total", actor="probe.boom", outcome="dead") == 1
    assert value(text, "concord_job_duration_seconds_count", actor="probe.ok") == 2
    assert queue_depths(broker)[0].dead == 1


def test_queue_depth_counts_waiting_messages():
    """Messages no worker takes: ready, delayed (a retry's wait) and dead-lettered, per queue."""
    from dramatiq.brokers.redis import RedisBroker

    brokers: list[dramatiq.Broker] = [StubBroker()]
    if REDIS_URL:
        brokers.append(RedisBroker(url=REDIS_URL, namespace=f"concord-depth-{RUN_ID}"))
    for broker in brokers:

        @dramatiq.actor(broker=broker, actor_name="depth.probe", queue_name="depth")
        def probe() -> None:
            pass

        try:
            for _ in range(3):
                probe.send()
            probe.send_with_options(delay=600_000)
            depth = {d.queue: d for d in queue_depths(broker)}["depth"]
            assert (depth.ready, depth.delayed, depth.dead) == (3, 1, 0), broker
        finally:
            broker.flush_all()


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    """The process's log records as the JSON lines of CONCORD_LOG_FORMAT=json."""
    from domain.kernel.settings import Settings

    stream = io.StringIO()
    handler = logs.handler(Settings(log_format="json"), stream)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield stream
    root.removeHandler(handler)
    root.setLevel(level)


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


async def test_access_log_is_one_json_object_per_request(hub, captured):
    resp = await hub.get(f"/api/pact/{uuid.uuid4()}", headers={"X-Request-Id": "trace-me-1"})
    assert resp.status == 404
    access = [r for r in lines(captured) if r["logger"] == "concord.access"]
    assert len(access) == 1, access
    entry = access[0]
    assert entry["level"] == "INFO"
    assert entry["method"] == "GET"
    assert entry["route"] == TOPIC_ROUTE
    assert entry["status"] == 404
    assert entry["request_id"] == "trace-me-1"
    assert entry["app"] == "hub"
    assert isinstance(entry["duration_ms"], float)
    assert entry["duration_ms"] >= 0
    assert entry["message"].startswith(f"GET {TOPIC_ROUTE} 404 ")
    assert entry["time"].endswith("+00:00")
    assert isinstance(entry["pid"], int)
    assert entry["client"] == "127.0.0.1"  # the socket's peer: no trusted proxy is configured
    assert entry["user_agent"].startswith("Python/")  # aiohttp's client
    assert entry["bytes"] == len(await resp.read())


async def test_access_log_names_the_client_behind_the_trusted_proxy_and_its_agent(
    hub, docs, settings, monkeypatch, captured
):
    monkeypatch.setattr(settings, "trusted_proxy_header", "X-Forwarded-For")
    agent = 'Probe/1.0 "quoted"\ttab'
    headers = {"X-Forwarded-For": "203.0.113.9, 198.51.100.7", "User-Agent": agent}
    resp = await hub.get("/healthz", headers={**headers, "X-Request-Id": "proxied-1"})
    assert resp.status == 200
    body = await resp.read()
    resp = await docs.get("/openapi.json", headers={**headers, "X-Request-Id": "proxied-2"})
    spec = await resp.read()
    resp = await hub.get("/api/pact/register", headers={**headers, "X-Request-Id": "proxied-3"})  # a 405
    refused = await resp.read()
    access = {r["request_id"]: r for r in lines(captured) if r["logger"] == "concord.access"}
    for rid, size in (("proxied-1", len(body)), ("proxied-2", len(spec)), ("proxied-3", len(refused))):
        entry = access[rid]
        assert entry["client"] == "198.51.100.7", entry  # the last entry: the one the proxy appended
        assert entry["user_agent"] == agent, entry
        assert entry["bytes"] == size, entry
    # The text line escapes what the client sent: no control character of the user agent reaches a terminal.
    message = access["proxied-1"]["message"]
    assert message.endswith(f" B from 198.51.100.7 {agent!r}"), message
    assert "\t" not in message


def test_scheduler_run_chatter_is_debug(captured):
    executor = logging.getLogger("apscheduler.executors.default")
    executor.info('Running job "x (trigger: interval[0:00:05])" (scheduled at 2026-01-01 00:00:00+00:00)')
    executor.info('Job "x (trigger: interval[0:00:05])" executed successfully')
    scheduler = logging.getLogger("apscheduler.scheduler")
    scheduler.info("Adding job tentatively -- it will be properly scheduled when the scheduler starts")
    scheduler.info('Added job "x" to job store "default"')
    scheduler.info("Scheduler started")
    executor.error('Job "x" raised an exception')
    # Whatever level another test left the loggers at, nothing of the per-run chatter is above DEBUG.
    assert [(r["logger"], r["level"]) for r in lines(captured) if r["level"] != "DEBUG"] == [
        ("apscheduler.scheduler", "INFO"),
        ("apscheduler.executors.default", "ERROR"),
    ]


def raw_request(port: int, data: bytes) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in header_lines)}
    return int(status_line.split()[1]), headers, body


TOO_LONG = "longer than the 8190"
BAD_REQUESTS = {
    "long request line": (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", TOO_LONG),
    "long header": (
        b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n",
        "longer than the 8190",
    ),
    "NUL in a header": (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", "malformed HTTP request"),
}


@pytest.mark.parametrize("case", sorted(BAD_REQUESTS))
async def test_unparseable_requests_get_the_apps_json_error_and_one_warning(runtime, caplog, case):
    from web.app import create_docs_app, create_hub_app

    data, detail = BAD_REQUESTS[case]
    for make, style in ((create_hub_app, "hub"), (create_docs_app, "problem")):
        async with served(make(runtime)) as port:
            caplog.clear()
            with caplog.at_level(logging.INFO):
                status, headers, body = await asyncio.to_thread(raw_request, port, data)
        assert status == 400
        problem = json.loads(body)
        if style == "problem":
            assert headers["content-type"].startswith("application/problem+json")
            assert problem["status"] == 400
            assert problem["title"] == "Bad Request"
        else:
            assert headers["content-type"].startswith("application/json")
            assert problem["error"] == "bad_request"
        assert detail in problem["detail"]
        assert headers["x-request-id"]
        records = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert [(r.name, r.levelname) for r in records] == [("concord.web", "WARNING")], records
        assert records[0].exc_info is None
        assert headers["x-request-id"] in records[0].getMessage()


async def _serve(args: list[str], env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str, str]:
    """Start `concord ARGS` on free ports; answers once both apps are ready (a loaded machine is slow to
    import three processes: up to three minutes). Stopped by the caller, also when this fails."""
    hub_port, docs_port = free_port(), free_port()
    env = {**env, "CONCORD_HUB_PORT": str(hub_port), "CONCORD_DOCS_PORT": str(docs_port)}
    proc = start(args, env, log)
    hub, docs = f"http://127.0.0.1:{hub_port}", f"http://127.0.0.1:{docs_port}"

    try:
        await ready(proc, log, hub, docs)
    except BaseException:
        stop(proc)
        raise
    return proc, hub, docs


@pytest.mark.slow
async def test_served_processes_share_their_metrics_and_log_json(runtime, tmp_path: Path):
    """`concord serve --processes 2`: whichever process answers the scrape, it counts every process's
    requests, the background process's job and the scheduler's sweeps; every log line is JSON."""
    await runtime.relay.stop()  # the test process shares the database: its relay must not take the jobs
    env = {"CONCORD_REDIS_URL": "", "CONCORD_LOG_FORMAT": "json", "CONCORD_LOG_LEVEL": "INFO"}
    log = tmp_path / "server.log"
    proc, hub, docs = await _serve([command("concord"), "serve", "--processes", "2"], env, log)
    try:
        key = await make_key(runtime)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as fresh:

            async def both_answer() -> set[int] | None:
                """Fresh connections reach both web processes, on both ports (the first to start answers
                alone for a while)."""
                seen: dict[str, set[int]] = {hub: set(), docs: set()}
                for base in (hub, docs):
                    for _ in range(16):
                        async with fresh.get(f"{base}/healthz") as resp:
                            seen[base].add((await resp.json())["pid"])
                return seen[hub] if len(seen[hub]) == 2 and seen[hub] == seen[docs] else None

            pids = await eventually(both_answer, timeout=180, interval=0.5)
            for n in range(40):  # fresh connections: the kernel spreads them over both processes
                topic = f"/api/pact/{uuid.uuid4()}"
                async with fresh.get(f"{hub}{topic}", headers={"X-Request-Id": f"mp-{n}"}) as resp:
                    assert resp.status == 404
            resp = await upload(fresh_client(fresh, docs), key, b"# Served\n\nText.\n", "served.md")
            assert resp.status == 202, await resp.text()

            async def scraped() -> str | None:
                async with fresh.get(f"{docs}/metrics") as r:
                    text = await r.text()
                done = value(text, "concord_jobs_total", actor=CONVERT, outcome="done")
                swept = value(text, "concord_sweep_runs_total", sweep="topics.expire_proposals", outcome="ok")
                # The process that did not answer adds its requests within FLUSH_SECONDS.
                served = value(text, "concord_http_requests_total", app="hub", route=TOPIC_ROUTE)
                return text if done >= 1 and swept >= 1 and served >= 40 else None

            await eventually(scraped, timeout=120)
            texts = [await scraped() or "" for _ in range(6)]  # answered by either process
            web_pids = {str(pid) for pid in pids}
            for text in texts:
                # Every live process says what it is (pid label): two web processes and the background one;
                # the CPU of all of them adds up. Their pools likewise; the build once.
                resident = {
                    lab["pid"]: v for n, lab, v in parse(text) if n == "process_resident_memory_bytes"
                }
                assert len(resident) == 3, resident
                assert web_pids <= resident.keys(), resident
                assert all(v > 10_000_000 for v in resident.values()), resident
                assert value(text, "process_cpu_seconds_total") > 0
                pools = {lab["pid"] for n, lab, _ in parse(text) if n == "concord_db_pool_size"}
                assert web_pids <= pools, pools
                assert len([n for n, _, _ in parse(text) if n == "concord_build_info"]) == 1
            # A web process killed, with no time to tidy up: its live values go with it, its counts stay.
            victim = min(pids)
            os.kill(victim, signal.SIGKILL)

            async def replaced() -> set[int] | None:
                answering = await both_answer()
                return answering if answering and victim not in answering else None

            await eventually(replaced, timeout=180, interval=0.5)
            async with fresh.get(f"{docs}/metrics") as r:
                after_kill = await r.text()
            shown = {
                lab.get("pid") for n, lab, _ in parse(after_kill) if n == "process_resident_memory_bytes"
            }
            assert str(victim) not in shown, shown
            assert len(shown) == 3, shown
            assert str(victim) not in {lab.get("pid") for n, lab, _ in parse(after_kill) if "_pool_" in n}
            topic_404 = {"app": "hub", "route": TOPIC_ROUTE, "status": "404"}
            assert value(after_kill, "concord_http_requests_total", **topic_404) == 40
        for text in texts:
            assert (
                value(text, "concord_http_requests_total", app="hub", route=TOPIC_ROUTE, status="404") == 40
            )
            assert value(text, "concord_jobs_total", actor=CONVERT, outcome="done") == 1
            assert value(text, "concord_http_requests_total", app="documents", route="/api/documents") == 1
        bad = b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
        status, headers, _ = await asyncio.to_thread(raw_request, int(hub.rsplit(":", 1)[1]), bad)
        assert status == 400
        assert headers["content-type"].startswith("application/json")
    finally:
        code = stop(proc, timeout=90)
    text = log.read_text()
    assert code == 0, text[-4000:]
    records = [json.loads(line) for line in text.splitlines() if line.strip()]  # every line is JSON
    access = [r for r in records if r.get("logger") == "concord.access" and r.get("route") == TOPIC_ROUTE]
    assert sorted(r["request_id"] for r in access) == sorted(f"mp-{n}" for n in range(40))
    assert {r["pid"] for r in access} == pids  # both processes logged some
    assert all(r["method"] == "GET" and r["status"] == 404 and r["duration_ms"] >= 0 for r in access)
    assert not [r for r in records if str(r["message"]).startswith(("Running job", "Added job"))]
    warned = [r for r in records if r["level"] == "WARNING" and r["logger"] == "concord.web"]
    assert len(warned) == 1, warned
    assert "exc_info" not in warned[0]
    errors = [r for r in records if r["level"] == "ERROR"]
    assert [r["logger"] for r in errors] == ["concord.supervisor"], errors  # the child killed above
    assert f"(pid {victim}) exited with signal SIGKILL" in errors[0]["message"]


class fresh_client:  # noqa: N801 - the shape tests.documents_support.upload expects of a test client
    def __init__(self, http: aiohttp.ClientSession, base: str) -> None:
        self.http, self.base = http, base

    def post(self, path: str, **kwargs: Any) -> Any:
        return self.http.post(f"{self.base}{path}", **kwargs)


@pytest.mark.slow
@pytest.mark.skipif(not REDIS_URL, reason="dramatiq worker processes need Redis (CONCORD_TEST_REDIS_URL)")
async def test_a_worker_machine_serves_its_job_metrics(runtime, tmp_path: Path):
    """`dramatiq workers.main --fork-function workers.exposition:serve` beside a web process that shares no
    metrics directory with it (another machine): the worker machine's /metrics counts the job it ran."""
    await runtime.relay.stop()
    metrics_port = free_port()
    env = {
        "CONCORD_QUEUE_NAMESPACE": f"concord-obs-{RUN_ID}",  # the test process's worker cannot take the jobs
        "CONCORD_LOG_LEVEL": "INFO",
        "CONCORD_WEB_PROCESSES": "1",
    }
    worker_env = {
        **env,
        "CONCORD_METRICS_DIR": str(tmp_path / "worker-metrics"),
        "CONCORD_METRICS_PORT": str(metrics_port),
        "CONCORD_METRICS_TOKEN": "worker-metrics-token",
    }
    worker_args = [command("dramatiq"), "workers.main", "-p", "2", "-t", "1"]
    worker = start(
        [*worker_args, "--fork-function", "workers.exposition:serve"], worker_env, tmp_path / "w.log"
    )
    web_env = {**env, "CONCORD_METRICS_DIR": str(tmp_path / "web-metrics")}
    try:
        proc, _hub, docs = await _serve([command("concord"), "web"], web_env, tmp_path / "web.log")
        try:
            key = await make_key(runtime)
            auth = {"Authorization": "Bearer worker-metrics-token"}
            async with aiohttp.ClientSession() as http:
                resp = await upload(fresh_client(http, docs), key, b"# Worker\n\nText.\n", "worker.md")
                assert resp.status == 202, await resp.text()

                async def counted() -> str | None:
                    try:
                        async with http.get(f"http://127.0.0.1:{metrics_port}/metrics", headers=auth) as r:
                            text = await r.text()
                    except aiohttp.ClientError:
                        return None
                    return text if value(text, "concord_jobs_total", actor=CONVERT, outcome="done") else None

                text = await eventually(counted, timeout=120, interval=0.5)
                assert value(text, "concord_jobs_total", actor=CONVERT, outcome="done") == 1
                assert value(text, "concord_job_duration_seconds_count", actor=CONVERT) == 1
                # What each process of the group is: two workers and the one serving /metrics; the pool of
                # the worker that ran the job.
                resident = [lab["pid"] for n, lab, _ in parse(text) if n == "process_resident_memory_bytes"]
                assert len(set(resident)) == 3, resident
                (worker_pool,) = [
                    v for n, lab, v in parse(text) if n == "concord_db_pool_size" and lab["pool"] == "worker"
                ]
                assert worker_pool >= 1
                async with http.get(f"http://127.0.0.1:{metrics_port}/metrics") as r:
                    assert r.status == 401
                async with http.get(f"{docs}/metrics") as r:  # the web machine: requests, no jobs
                    web_text = await r.text()
                assert value(web_text, "concord_http_requests_total", route="/api/documents") == 1
                assert value(web_text, "concord_jobs_total") == 0
        finally:
            assert stop(proc, timeout=90) == 0
    finally:
        stop(worker, timeout=60)


@pytest.mark.skipif(not REDIS_URL, reason="dramatiq worker processes need Redis (CONCORD_TEST_REDIS_URL)")
async def test_every_line_of_a_worker_group_is_json(runtime, tmp_path: Path):
    """Dramatiq's CLI run through infra.logs.run_dramatiq under CONCORD_LOG_FORMAT=json: the lines of its
    parent (booting up, signals), of its fork process (ready for action) and of its workers are all JSON, in
    the order Dramatiq writes them, with the pid of the process that logged each."""
    await runtime.relay.stop()
    metrics_port = free_port()
    env = {
        "CONCORD_QUEUE_NAMESPACE": f"concord-json-{RUN_ID}",
        "CONCORD_LOG_FORMAT": "json",
        "CONCORD_LOG_LEVEL": "INFO",
        "CONCORD_METRICS_DIR": str(tmp_path / "metrics"),
        "CONCORD_METRICS_PORT": str(metrics_port),
    }
    group = ["workers.main", "-p", "2", "-t", "1", "--fork-function", "workers.exposition:serve"]
    program = f"import sys; from infra.logs import run_dramatiq; sys.exit(run_dramatiq({group!r}))"
    log = tmp_path / "group.log"
    proc = start([sys.executable, "-c", program], env, log)
    try:

        async def serving() -> bool:
            if proc.poll() is not None:
                raise AssertionError(f"the worker group exited:\n{log.read_text()}")
            text = log.read_text()
            try:
                async with aiohttp.ClientSession() as http:
                    async with http.get(f"http://127.0.0.1:{metrics_port}/metrics") as r:
                        up = r.status == 200
            except aiohttp.ClientError:
                return False
            return up and text.count("Worker process is ready for action.") == 2

        await eventually(serving, timeout=120, interval=0.5)
    finally:
        code = stop(proc, timeout=60)
    text = log.read_text()
    assert code == 0, text[-4000:]
    records = []
    for line in text.splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            raise AssertionError(f"not a JSON line: {line!r}\n{text}") from None
    messages = {r["message"]: r for r in records}
    parent = messages[f"Dramatiq {dramatiq.__version__!r} is booting up."]
    assert parent["logger"] == "dramatiq.MainProcess"
    assert parent["pid"] == proc.pid
    assert messages["Sending signal 'SIGTERM' to subprocesses..."]["pid"] == proc.pid
    fork = messages["Fork process 'workers.exposition:serve' is ready for action."]
    workers = {r["pid"] for r in records if r["message"] == "Worker process is ready for action."}
    assert len(workers) == 2
    assert len({proc.pid, fork["pid"], *workers}) == 4
    assert all(r["level"] == "INFO" for r in records), text


@pytest.mark.slow
@pytest.mark.skipif(not REDIS_URL, reason="`concord worker` runs on Redis (CONCORD_TEST_REDIS_URL)")
async def test_every_line_of_concord_worker_is_json(runtime, tmp_path: Path):
    """`concord worker`, the command the deploy files run, under CONCORD_LOG_FORMAT=json: the group's parent,
    its worker processes and its metrics process write nothing but JSON lines, from start to SIGTERM."""
    await runtime.relay.stop()
    metrics_port = free_port()
    env = {
        "CONCORD_QUEUE_NAMESPACE": f"concord-json-group-{RUN_ID}",
        "CONCORD_LOG_FORMAT": "json",
        "CONCORD_LOG_LEVEL": "INFO",
        "CONCORD_METRICS_DIR": str(tmp_path / "metrics"),
        "CONCORD_METRICS_PORT": str(metrics_port),
    }
    log = tmp_path / "group.log"
    proc = start([command("concord"), "worker", "--processes", "2", "--threads", "1", "--metrics"], env, log)
    try:

        async def serving() -> bool:
            if proc.poll() is not None:
                raise AssertionError(f"the worker group exited:\n{log.read_text()}")
            try:
                async with aiohttp.ClientSession() as http:
                    async with http.get(f"http://127.0.0.1:{metrics_port}/metrics") as r:
                        up = r.status == 200
            except aiohttp.ClientError:
                return False
            return up and log.read_text().count(" ready: 1 threads") == 2

        await eventually(serving, timeout=120, interval=0.5)
    finally:
        code = stop(proc, timeout=60)
    text = log.read_text()
    assert code == 0, text[-4000:]
    records = []
    for line in text.splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            raise AssertionError(f"not a JSON line: {line!r}\n{text}") from None
    pids = {r["pid"] for r in records}
    assert proc.pid in pids, text  # the parent logged
    assert len(pids) >= 3, text  # and both worker processes
    assert any(r["logger"].startswith("dramatiq.") for r in records), text  # Dramatiq's own lines too


@pytest.mark.slow
async def test_the_scheduler_alone_serves_its_sweep_metrics(runtime, tmp_path: Path):
    """`concord scheduler` runs no app, so it shows its sweep runs on CONCORD_METRICS_PORT (a scheduler pod
    shares no metrics directory with a web pod), behind the token like every /metrics."""
    metrics_port = free_port()
    env = {
        "CONCORD_METRICS_PORT": str(metrics_port),
        "CONCORD_METRICS_TOKEN": "scheduler-metrics-token",
        "CONCORD_SWEEP_INTERVAL_SCALE": "0.01",
        "CONCORD_QUEUE_NAMESPACE": f"concord-sched-{RUN_ID}",
    }
    proc = start([command("concord"), "scheduler"], env, tmp_path / "scheduler.log")
    try:
        auth = {"Authorization": "Bearer scheduler-metrics-token"}
        async with aiohttp.ClientSession() as http:

            async def swept() -> str | None:
                try:
                    async with http.get(f"http://127.0.0.1:{metrics_port}/metrics", headers=auth) as r:
                        text = await r.text()
                except aiohttp.ClientError:
                    return None
                return text if value(text, "concord_sweep_runs_total", outcome="ok") >= 2 else None

            text = await eventually(swept, timeout=60, interval=0.5)
            assert value(text, "concord_sweep_duration_seconds_count") >= 2
            assert value(text, "concord_sweep_runs_total", outcome="failed") == 0
            async with http.get(f"http://127.0.0.1:{metrics_port}/metrics") as r:
                assert r.status == 401
    finally:
        assert stop(proc, timeout=60) == 0, (tmp_path / "scheduler.log").read_text()
