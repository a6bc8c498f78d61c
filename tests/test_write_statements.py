"""The write path stays lean: each main write is one unit of work on one pooled connection (the caller's
key is looked up inside it, no ping first) and runs at most a fixed number of SQL statements (SQLite and
PostgreSQL alike), so a change that adds round trips to a hot request fails here instead of in production."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import event

from tests.conftest import PG_ADMIN_URL
from tests.consensus_helpers import open_topic, propose
from tests.documents_support import make_key, upload_ready
from tests.waiting import eventually

# Statements per request, BEGIN/COMMIT/ROLLBACK not counted (one connection checkout per request is).
# Measured when written. SQLite: register 5, propose 8, approve 9, merging approve 13 (its two rewarded
# wallets take one UPDATE each), document propose 8, vote 9, approving vote 11. PostgreSQL writes a unit of
# work's events, audit and ledger entries and wallet changes in one statement (domain/kernel/journal.py), a
# vote and its counter in another, a merge's new content with the settling of its section in a third, and
# reads a vote's proposal and voters in one (a topic's in the topic's lock): 3, 4, 4, 6, 6, 6 and 7. Before
# the lean write path: 11, 20, 20, 35, 10, 15 and 26, each guarded request on two connections (a transaction
# of its own for the key lookup), plus a ping per checkout on PostgreSQL. A hub agent's key is looked up by
# its first request only (domain/agents/registry.py): one statement fewer in propose and both approvals.
# The event hash chain (issue 30) added one statement to every write that records an event: the stream's
# numbers are reserved first (the chained records hash their sequence numbers), then written with the hash
# of the last one (on PostgreSQL inside the combined statement).
# PACT vote obligations (issue 31): a proposal reads its voters and inserts their obligations (two more); a
# vote discharges the voter's (one more), and a vote that ends the proposal what is still owed on it and on
# the rivals a merge superseded (one more, in one statement).
# A merge that supersedes rivals closes what a policy put before a person for them (one statement for all
# of them; issue 31): one more in a merging vote that has rivals (the document approving vote here has one).
# Section locks on topics (issue 30) added one to a topic's propose: the section's lock is read after the
# statement that locks the topic, since a row read by the statement that waited for the lock is the row of
# before the wait (tests/test_topic_locks.py).
# Issue 35 (PostgreSQL): a vote fulfils its voter's obligation in the statement that inserts it, a merge
# discharges what was owed on the settled proposals in the statement that settles them, and a topic's
# propose and votes read the stream's counter in the statement that locks the topic, so their events are
# numbered and chained without a reservation first (domain/kernel/journal.py `expect`; the reservation
# comes back only when another writer moved the counter meanwhile, tests/test_event_chain.py).
BOUNDS = {
    "sqlite": {
        "register": 5,
        "propose": 11,
        "approve": 10,
        "merging approve": 15,
        "document propose": 11,
        "document vote": 11,
        "document approving vote": 15,
    },
    "postgresql": {
        "register": 3,
        "propose": 6,
        "approve": 3,
        "merging approve": 5,
        "document propose": 9,
        "document vote": 7,
        "document approving vote": 9,
    },
}
_CONTROL = re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK)\b", re.IGNORECASE)


@dataclass
class Tally:
    dialect: str
    statements: list[str] = field(default_factory=list)
    checkouts: int = 0


def _counted() -> bool:
    """Statements of the requests under test, not of the outbox relay polling in the background."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return True
    return task is None or task.get_name() != "outbox-relay"


@pytest.fixture
def tally(runtime: Any) -> Callable[[], Any]:
    engine = runtime.db.engine.sync_engine
    current: list[Tally] = []

    def on_execute(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if current and _counted() and not _CONTROL.match(statement):
            current[-1].statements.append(statement.split("\n")[0][:100])

    def on_checkout(*_args: Any) -> None:
        if current and _counted():
            current[-1].checkouts += 1

    event.listen(engine, "before_cursor_execute", on_execute)
    event.listen(engine.pool, "checkout", on_checkout)

    @contextmanager
    def measure() -> Iterator[Tally]:
        current.append(Tally(engine.dialect.name))
        try:
            yield current[-1]
        finally:
            current.pop()

    # The listeners die with the test's engine: removing one while the relay is inside a dispatch (SQLite's
    # BEGIN hook awaits) is refused.
    return measure


async def _within(tally: Any, name: str, call: Callable[[], Awaitable[Any]]) -> Any:
    with tally() as seen:
        result = await call()
    listing = "\n  ".join(seen.statements)
    assert seen.checkouts == 1, f"{name}: {seen.checkouts} connections checked out\n  {listing}"
    bound = BOUNDS[seen.dialect][name]
    assert len(seen.statements) <= bound, f"{name}: {len(seen.statements)} statements\n  {listing}"
    return result


async def test_hub_writes_stay_within_their_statement_budget(hub: Any, register: Any, tally: Any) -> None:
    async def post(path: str, agent: dict | None, body: Any, expect: int) -> Any:
        resp = await hub.post(path, headers=agent["headers"] if agent else None, json=body)
        assert resp.status == expect, await resp.text()
        return await resp.json()

    await register()  # the first registration of a database creates the mint's wallet
    await _within(tally, "register", lambda: post("/api/pact/register", None, {"agentName": "Lean"}, 201))
    topic_id, (author, first, second) = await open_topic(hub, register)
    await propose(hub, topic_id, author)  # the first proposal of a topic creates its wallets and streams
    for _round in range(2):
        made = await _within(
            tally,
            "propose",
            lambda: post(
                f"/api/pact/{topic_id}/proposals",
                author,
                {"sectionId": "sec:discussion", "newContent": "Settled.", "summary": "Close it"},
                201,
            ),
        )
        url = f"/api/pact/{topic_id}/proposals/{made['id']}/approve"
        await _within(tally, "approve", lambda u=url: post(u, first, None, 200))  # type: ignore[misc]
        merged = await _within(tally, "merging approve", lambda u=url: post(u, second, None, 200))  # type: ignore[misc]
        assert merged["status"] == "merged"


async def test_document_writes_stay_within_their_statement_budget(
    docs: Any, runtime: Any, tally: Any
) -> None:
    keys = [await make_key(runtime, org="Acme", name=f"k{i}") for i in range(3)]
    doc = await upload_ready(docs, keys[0], b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n", "plan.md")
    base = f"/api/tap/{doc['id']}"
    for i, (key, role) in enumerate(zip(keys, ("editor", "reviewer", "reviewer"), strict=True)):
        resp = await docs.post(
            f"{base}/join", headers=key["headers"], json={"agentName": f"a{i}", "role": role}
        )
        assert resp.status == 201, await resp.text()

    async def post(path: str, key: dict, body: Any, expect: int) -> Any:
        resp = await docs.post(path, headers=key["headers"], json=body)
        assert resp.status == expect, await resp.text()
        return await resp.json()

    body = {"sectionId": "sec:plan:budget", "content": "Less money.", "summary": "Trim"}
    await post(f"{base}/proposals", keys[0], body, 201)  # the first one opens the document's event stream
    made = await _within(tally, "document propose", lambda: post(f"{base}/proposals", keys[0], body, 201))
    url = f"{base}/proposals/{made['proposalId']}/approve"
    await _within(tally, "document vote", lambda: post(url, keys[1], {"reason": "ok"}, 200))
    done = await _within(tally, "document approving vote", lambda: post(url, keys[2], {"reason": "ok"}, 200))
    assert done["status"] == "approved"


@pytest.mark.skipif(not PG_ADMIN_URL, reason="PostgreSQL only: connections the server ends")
async def test_connections_ended_by_the_server_are_replaced_without_a_failed_request(
    hub: Any, register: Any, runtime: Any
) -> None:
    """No ping per checkout: a pooled connection the server closed is noticed by the driver and replaced
    at checkout, so the next requests succeed."""
    agent = await register()
    import asyncpg

    await runtime.relay.stop()  # its polls would check connections out (and replace them) meanwhile
    pool = runtime.db.engine.pool

    def idle() -> list[Any]:
        entries = list(pool._pool._queue._queue)  # the idle connections (the pool's asyncio.Queue's deque)
        return [e.dbapi_connection.driver_connection for e in entries if e.dbapi_connection is not None]

    pooled = idle()
    assert pooled
    # From a connection of its own (not the pool's): every pooled connection of this database is ended.
    admin = await asyncpg.connect(runtime.settings.db_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        ended = await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = 'concord'"
        )
    finally:
        await admin.close()
    assert ended >= len(pooled)

    async def closed() -> bool:
        """The driver has noticed the end of every connection the pool held (whatever joined it since)."""
        return all(conn.is_closed() for conn in pooled)

    await eventually(closed)
    for _ in range(3):
        resp = await hub.get("/api/pact/wallet", headers=agent["headers"])
        assert resp.status == 200, await resp.text()
    assert not runtime.db.engine.pool._pre_ping
