"""Test set-up: the suite runs on SQLite + in-process broker by default, or on PostgreSQL + Redis when
CONCORD_TEST_DATABASE_URL / CONCORD_TEST_REDIS_URL are set (each run gets its own database and queue
namespace, so runs never collide). Tests talk HTTP to the real apps on loopback, with real workers."""

from __future__ import annotations

import asyncio
import functools
import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web_app

RUN_ID = uuid.uuid4().hex[:10]
TMP = Path(tempfile.mkdtemp(prefix=f"concord-test-{RUN_ID}-"))
PG_ADMIN_URL = os.environ.get("CONCORD_TEST_DATABASE_URL") or None
REDIS_URL = os.environ.get("CONCORD_TEST_REDIS_URL") or None
PG_DB = f"concord_test_{RUN_ID}"


def _pg_url(admin: str, dbname: str) -> str:
    from sqlalchemy.engine import make_url

    url = make_url(
        admin.replace("postgresql://", "postgresql+asyncpg://", 1)
        if admin.startswith("postgresql://")
        else admin
    )
    return url.set(drivername="postgresql+asyncpg", database=dbname).render_as_string(hide_password=False)


def _admin_dsn() -> str:
    """asyncpg's address of the server's `postgres` database, where databases are made and dropped."""
    return _pg_url(PG_ADMIN_URL or "", "postgres").replace("postgresql+asyncpg", "postgresql")


def _admin(sql: str) -> None:
    import asyncpg

    async def run() -> None:
        conn = await asyncpg.connect(_admin_dsn())
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(run())


os.environ.update(
    {
        "CONCORD_DATA_DIR": str(TMP / "var"),
        "CONCORD_QUEUE_NAMESPACE": f"concord-test-{RUN_ID}",
        "CONCORD_JOB_MAX_RETRIES": "2",
        "CONCORD_JOB_MIN_BACKOFF_MS": "50",
        "CONCORD_RELAY_INTERVAL_SECONDS": "0.2",
        "CONCORD_SWEEP_INTERVAL_SCALE": "0.02",
        "CONCORD_WORKER_THREADS": "4",
        "CONCORD_LOG_LEVEL": "WARNING",
        # Argon2id at its smallest cost: still the real hash and check (the parameters travel in each hash,
        # tests/people/test_password_cost.py covers them), but a sign-in costs microseconds, not 0.2 s of CPU.
        "CONCORD_PASSWORD_HASH_MEMORY_KIB": "8",
        "CONCORD_PASSWORD_HASH_TIME_COST": "1",
        "CONCORD_PASSWORD_HASH_PARALLELISM": "1",
        # Servers the tests start run one process unless a test asks for more (tests/test_processes.py).
        "CONCORD_WEB_PROCESSES": "1",
    }
)
if PG_ADMIN_URL:
    os.environ["CONCORD_DATABASE_URL"] = _pg_url(PG_ADMIN_URL, PG_DB)
else:
    os.environ["CONCORD_DATABASE_URL"] = f"sqlite+aiosqlite:///{TMP / 'var' / 'concord.db'}"
if REDIS_URL:
    os.environ["CONCORD_REDIS_URL"] = REDIS_URL
else:
    os.environ.pop("CONCORD_REDIS_URL", None)

from domain.kernel import clock as wall  # noqa: E402
from domain.kernel.settings import Settings, get_settings  # noqa: E402
from infra import collector  # noqa: E402
from tests import clock_shift  # noqa: E402

CLOCK_NOTE = clock_shift.apply()  # CONCORD_TEST_CLOCK: the whole run at another hour (tests/README.md)


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return  # pytest-xdist's controller collects nothing: its collector stays as CPython sets it
    collector.pause()  # collecting imports the application and builds what a worker keeps to the end


def pytest_collection_finish(session: pytest.Session) -> None:
    collector.settle()  # a test worker collects as a serving process does (infra/collector.py)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """aiohttp keeps each (handler, application) it has run a request through in a process-wide LRU of
    1,024 middleware chains: a serving process builds its apps once, but a test builds two, and the LRU kept
    the last few hundred tests' apps with their routers alive (~2,900 objects each: 1.25 M tracked objects
    after 400 API tests, 81 k without them). Every full collection walked them, pytest's two at a worker's
    end included (2-4 s of CPU each in a full run)."""
    cached = getattr(web_app, "_cached_build_middleware", None)  # private: gone in a later aiohttp, skip
    if cached is not None:
        cached.cache_clear()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if CLOCK_NOTE:
        terminalreporter.write_line(CLOCK_NOTE)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests marked slow start the run, spread over the workers: a worker that took one near the end of
    a run would hold the run up while the others sat idle, and one that took them all would run them one
    after the other. `make test` hands each worker a contiguous share of the collection first (`--dist
    worksteal`: the first gets len // workers, the next len(rest) // (workers - 1)…; an idle worker later
    takes the second half of the longest queue), so each share starts with every n-th slow test. The order
    is computed alike in every worker (xdist runs only when the collections are equal)."""
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    slow = [item for item in items if item.get_closest_marker("slow")]
    rest = [item for item in items if not item.get_closest_marker("slow")]
    ordered: list[pytest.Item] = []
    left = len(items)
    for share in range(workers):
        size = left // (workers - share)
        mine = slow[share::workers]
        take = max(0, size - len(mine))
        ordered += mine + rest[:take]
        del rest[:take]
        left -= size
    items[:] = ordered + rest


@pytest.fixture
def clock() -> Iterator[wall.Clock]:
    """The process's wall clock; a test moves it with clock.advance(), and it is put back afterwards."""
    shift = wall.clock.shift
    yield wall.clock
    wall.clock.shift = shift


TEMPLATE_PREFIX = "concord_test_template_"


def _migrated_template() -> str:
    """A PostgreSQL database migrated to this checkout's migrations, named by a digest of them, made by the
    first worker that needs it and copied by every worker (`CREATE DATABASE … TEMPLATE`: a file copy, a
    fraction of a second, where migrating costs each worker seconds of CPU). It outlives the run, as a cache
    for the next one; a template of other migrations is dropped when a new one is made. An advisory lock
    makes one worker build it while the others wait."""
    import hashlib

    import asyncpg

    from migrations import HERE, upgrade

    digest = hashlib.sha256()
    for path in sorted([HERE / "env.py", *HERE.glob("versions/*.py")]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    name = f"{TEMPLATE_PREFIX}{digest.hexdigest()[:16]}"

    async def make() -> None:
        conn = await asyncpg.connect(_admin_dsn())
        try:
            await conn.execute("SELECT pg_advisory_lock(hashtext('concord test template'))")
            if await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name):
                return
            building = f"{name}_building"
            await conn.execute(f'DROP DATABASE IF EXISTS "{building}"')
            await conn.execute(f'CREATE DATABASE "{building}"')
            await asyncio.to_thread(upgrade, _pg_url(PG_ADMIN_URL or "", building))
            for (old,) in await conn.fetch(
                "SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname <> $2",
                f"{TEMPLATE_PREFIX}%",
                building,
            ):
                await conn.execute(f'DROP DATABASE IF EXISTS "{old}" WITH (FORCE)')
            await conn.execute(f'ALTER DATABASE "{building}" RENAME TO "{name}"')
        finally:
            await conn.close()  # the session's advisory lock goes with it

    asyncio.run(make())
    return name


@pytest.fixture(scope="session", autouse=True)
def database() -> Iterator[str]:
    from migrations import upgrade

    settings = get_settings()
    if PG_ADMIN_URL:
        _admin(f'CREATE DATABASE "{PG_DB}" TEMPLATE "{_migrated_template()}"')
        # A commit returns before its WAL reaches the disk (what the suite checks is what committed
        # transactions see, never a server crash): each of a run's thousands of commits otherwise waits for a
        # flush (0.3-1 ms here), in every connection to this database, the `concord` processes' too.
        _admin(f'ALTER DATABASE "{PG_DB}" SET synchronous_commit = off')
    else:
        upgrade(settings.db_url)
    yield settings.db_url
    if PG_ADMIN_URL:
        _admin(
            f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{PG_DB}' "
            "AND pid <> pg_backend_pid()"
        )
        _admin(f'DROP DATABASE IF EXISTS "{PG_DB}"')


@pytest.fixture(scope="session")
def broker(database: str) -> Iterator[Any]:
    """The process's real broker and a real Dramatiq worker consuming from it."""
    from tests import suite_worker
    from workers.broker import setup_broker
    from workers.embedded import start_worker

    b = setup_broker(get_settings())
    suite_worker.of(b)
    worker = start_worker(b, 4)
    yield b
    worker.stop()
    if REDIS_URL:
        client = b.client  # type: ignore[attr-defined]
        # The worker's own namespace (concord-test-<run id>) and those its tests gave the `concord` processes
        # and brokers they start (concord-<what>-<run id>: each leaves its workers' heartbeats behind).
        keys = list(client.scan_iter(f"concord-*{RUN_ID}*"))
        if keys:
            client.delete(*keys)


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The live settings object; attributes set through `monkeypatch` are restored after the test."""
    return get_settings()


async def _wipe(db: Any) -> None:
    """Every table emptied, dependents first. On PostgreSQL with DELETE and sequences put back with setval,
    not TRUNCATE … RESTART IDENTITY: a TRUNCATE gives every table, index and sequence a new file, hundreds
    a test, and a suite's worth of them made each checkpoint fsync over 100,000 files (DROP DATABASE in the
    migration tests waited half a minute for one)."""
    from domain.tables import metadata

    tables = metadata.sorted_tables
    async with db.engine.begin() as conn:
        # One statement names the tables holding rows (a test writes to a handful of the fifty-odd), so
        # only those are emptied: one round trip instead of one per table.
        dirty = set((await conn.exec_driver_sql(_written_sql(conn.dialect))).scalars())
        for i in reversed(range(len(tables))):
            if i in dirty:
                await conn.execute(tables[i].delete())
        if not db.is_sqlite:
            await conn.exec_driver_sql(
                "SELECT setval(c.oid, s.seqstart, false) FROM pg_class c"
                " JOIN pg_sequence s ON s.seqrelid = c.oid JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = current_schema()"
            )


@functools.cache
def _written_sql(dialect: Any) -> str:
    """The statement naming (by position in `metadata.sorted_tables`) the tables that hold rows, compiled
    once per dialect: built and compiled afresh, its 53 subqueries were a tenth of a test's set-up."""
    from sqlalchemy import exists, literal, select, union_all

    from domain.tables import metadata

    written = union_all(
        *(select(literal(i)).where(exists().select_from(t)) for i, t in enumerate(metadata.sorted_tables))
    )
    return str(written.compile(dialect=dialect, compile_kwargs={"literal_binds": True}))


# The relay poll of a test's own runtime (the `concord` processes tests start poll every 0.2 s, above).
RUNTIME_RELAY_INTERVAL = 2.0

# Idle connections a worker keeps between tests: enough for most tests' requests, few enough that four
# workers leave PostgreSQL's slots (100 by default) to the servers and workers the tests start.
WARM_CONNECTIONS = 4


@pytest.fixture(scope="session")
async def shared_db(database: str) -> AsyncIterator[Any]:
    """One Database for every test's runtime in this worker (the whole run shares one event loop,
    pyproject's asyncio_default_*_loop_scope): its pooled connections outlive a test, so a test does not
    pay for new database sessions (on PostgreSQL, a new server process with cold catalogue caches each)."""
    from domain.kernel.db import Database

    settings = get_settings()
    db = Database(settings.db_url, pool_size=settings.db_pool_size, max_overflow=settings.db_max_overflow)
    yield db
    await db.dispose()


@pytest.fixture
async def runtime(broker: Any, shared_db: Any) -> AsyncIterator[Any]:
    from runtime.process import Runtime
    from tests import suite_worker

    settings = get_settings()
    # No job of an earlier test runs during the wipe or after it (tests/suite_worker.py); the wipe comes
    # before the runtime's relay starts, which would send what an earlier test left unsent as this test's.
    await asyncio.to_thread(suite_worker.of(broker).next_test)
    await _wipe(shared_db)
    from workers.database import forget_cached

    forget_cached()  # the workers' Database outlives the tables it remembered ids from
    shared_db.forget_cached()  # and so does the tests' own
    if REDIS_URL:
        client = broker.client
        for key in client.scan_iter(f"{settings.queue_namespace}:ratelimit*"):
            client.delete(key)
        # The queues start empty too: a message an earlier test's `concord` process fetched and never acked
        # (stopped or killed with it) stays counted until the broker's maintenance puts it back, and a test
        # that waits for its queue to drain (`broker.join`) would wait for it.
        broker.flush_all()
    rt = await Runtime.start(settings, relay=True, scheduler=False, worker=False, db=shared_db)
    # Every commit that adds jobs wakes the relay at once; its poll only finds what another Database or
    # process wrote. At the suite's 0.2 s (for the `concord` processes the tests start) the idle polls of a
    # test's runtime were ~2% of a worker's CPU; at the default interval they are a tenth of that.
    assert rt.relay is not None  # relay=True
    rt.relay.interval = RUNTIME_RELAY_INTERVAL
    yield rt
    await rt.stop()
    pool = shared_db.engine.pool
    if pool.checkedout() or pool.checkedin() > WARM_CONNECTIONS:
        # A connection the test left checked out would shrink the pool for every later test, and the idle
        # connections a busy test opened would hold the server's slots (the `concord` processes other tests
        # start need theirs): start afresh.
        await shared_db.dispose()


@pytest.fixture
def aiohttp_client_cls() -> type:
    """Every client of an app built from an Api checks each response against the app's declarations."""
    from tests.response_check import CheckedClient

    return CheckedClient


@pytest.fixture
async def hub(aiohttp_client: Any, runtime: Any) -> Any:
    from web.app import create_hub_app

    return await aiohttp_client(create_hub_app(runtime))


@pytest.fixture
async def docs(aiohttp_client: Any, runtime: Any) -> Any:
    from web.app import create_docs_app

    return await aiohttp_client(create_docs_app(runtime))


@pytest.fixture
def register(hub: Any) -> Callable[..., Awaitable[dict[str, Any]]]:
    counter = iter(range(1, 10_000))

    async def do(name: str | None = None, **extra: Any) -> dict[str, Any]:
        body = {"agentName": name or f"agent-{next(counter)}-{uuid.uuid4().hex[:6]}", **extra}
        resp = await hub.post("/api/pact/register", json=body)
        assert resp.status == 201, await resp.text()
        data = await resp.json()
        data["headers"] = {"Authorization": f"Bearer {data['apiKey']}"}
        return data

    return do
