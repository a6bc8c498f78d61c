"""What a unit of work appends when it commits: its events (numbered per stream), its audit entries, its
ledger entries and the net balance change of each wallet it moved tokens in or out of.

domain/kernel/events, audit and ledger queue rows here; one finisher writes them just before the commit,
after everything else the transaction wrote (domain/kernel/db.py). So the row locks they take are the last a
transaction takes, each kind in one global order: event-stream counters by stream name, then wallets by id.
A transaction therefore holds them only for its last statement or two and cannot close a wait cycle with
the resource rows it locked earlier.

On SQLite (one writer at a time, no network round trip) each kind is one statement. On PostgreSQL the
usual unit (events of one stream, any audit and ledger entries, a few wallets) is one statement of
data-modifying CTEs with each column sent as one array parameter, so the statement's text depends only on
its shape and stays prepared. Inside it the order of the row locks is forced, not left to the planner:
each wallet UPDATE waits for the CTE before it (stream counter first, then wallets in id order).

Events are chained (PACT §6.4): each carries `prev_hash`, the hash of its stream's previous event as
served (domain/kernel/event_record.py). The counter row keeps the hash of the stream's last event, so the
statement that reserves the sequence numbers, and takes the stream's lock, also answers the hash to chain
from; the hashes are computed here, under that lock, and the counter's new last hash is written with the
events. Writers of one stream are ordered by the lock, so the chain is exact under any concurrency. On
PostgreSQL this costs the usual unit one more round trip: the reservation first (its answers are needed to
compute the hashes), then everything else in one statement.

The records hashed are the events as the API serves them; after the commit they are handed to whatever in
the process follows committed events (domain/kernel/event_feed.py: the live event streams), so a listener
gets an event without a read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from sqlalchemy import bindparam, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from domain.kernel import event_feed
from domain.kernel.clock import utcnow
from domain.kernel.db import after_commit, before_commit, table_of, unit_state
from domain.kernel.errors import PaymentRequired
from domain.kernel.event_record import GENESIS, GENESIS_V202, link, served
from domain.kernel.models import AuditEntry, Event, EventStream, LedgerEntry, Wallet
from domain.kernel.sqlutil import DriverStatement

_STREAMS = table_of(EventStream)
_EVENTS = table_of(Event)
_AUDIT = table_of(AuditEntry)
_ENTRIES = table_of(LedgerEntry)
_WALLETS = table_of(Wallet)
_KEY = "concord_journal"
# More wallets than this in one unit of work are updated one statement each after the combined one.
_MAX_FUSED_WALLETS = 4


@dataclass
class Journal:
    """The rows one unit of work appends at its commit."""

    events: list[dict[str, Any]] = field(default_factory=list)
    audit: list[dict[str, Any]] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    changes: dict[str, int] = field(default_factory=dict)  # wallet id -> net change (never the mint)
    # The served records of the events written, for the followers of committed events (domain/kernel/
    # event_feed.py): collected only while something follows them, handed over after the commit.
    written: list[event_feed.Committed] = field(default_factory=list)
    # What a statement of this unit of work read of a stream's counter (last_seq, last_hash), unlocked: on
    # PostgreSQL the combined statement then numbers and chains from it without a reservation first, and
    # writes only if the counter still holds it (see `expect`).
    expected: dict[str, tuple[int, str | None]] = field(default_factory=dict)


def of(session: AsyncSession | Session) -> Journal:
    """The unit of work's journal, created (and its writer queued for the commit) on first use."""
    state = unit_state(session)
    found = state.get(_KEY)
    if found is None:
        found = state[_KEY] = Journal()
        before_commit(session, 10, "journal", write)
    assert isinstance(found, Journal)
    return found


def queued(session: AsyncSession | Session) -> Journal | None:
    found = unit_state(session).get(_KEY)
    return found if isinstance(found, Journal) else None


def expect(session: AsyncSession | Session, stream: str, last_seq: int, last_hash: str | None) -> None:
    """The stream's counter as a statement of this unit of work read it (unlocked: possibly stale). On
    PostgreSQL the unit's combined statement numbers and chains its events from it and advances the counter
    only where it still holds `last_seq` (taking the stream's lock there, as the reservation would); if
    another writer moved it meanwhile, the statement writes nothing and the unit falls back to the
    reservation. One round trip fewer a write whenever the read was current."""
    of(session).expected[stream] = (last_seq, last_hash)


# ---- one statement per kind (SQLite, and what the combined statement does not take) ----


def _reserve(dialect: Any) -> Any:
    """Add n to a stream's counter (creating it, its window opened now), answering the new last number
    and the hash of the stream's last event before these (NULL when it has none chained)."""
    upsert = dialect.insert(_STREAMS).values(
        stream=bindparam("stream"), last_seq=bindparam("n"), window_opened_at=bindparam("now")
    )
    return upsert.on_conflict_do_update(
        index_elements=[_STREAMS.c.stream], set_={"last_seq": _STREAMS.c.last_seq + upsert.excluded.last_seq}
    ).returning(_STREAMS.c.last_seq, _STREAMS.c.last_hash)


# Built once and executed with parameters: no per-call statement building or cache key.
_RESERVE = {"postgresql": _reserve(postgresql), "sqlite": _reserve(sqlite)}
_SET_LAST_HASH = (
    update(_STREAMS).where(_STREAMS.c.stream == bindparam("p_stream")).values(last_hash=bindparam("p_hash"))
)
_APPLY = (
    update(_WALLETS)
    .where(_WALLETS.c.id == bindparam("p_wid"), _WALLETS.c.balance + bindparam("p_change") >= 0)
    .values(balance=_WALLETS.c.balance + bindparam("p_change"))
    .returning(_WALLETS.c.id)
)


def _is_postgresql(session: Session) -> bool:
    return bool(session.get_bind().dialect.name == "postgresql")


def _reserved(session: Session, stream: str, n: int) -> tuple[int, str]:
    """Reserve n sequence numbers of the stream (taking its lock): the first, and the prev_hash of the
    event that gets it."""
    reserve = _RESERVE["postgresql" if _is_postgresql(session) else "sqlite"]
    last, last_hash = session.execute(reserve, {"stream": stream, "n": n, "now": utcnow()}).one()
    first = int(last) - n + 1
    if last_hash is None:  # nothing chained yet: a new stream, or history from before the chain
        last_hash = GENESIS if first == 1 else GENESIS_V202
    return first, str(last_hash)


def _chain(session: Session, rows: list[dict[str, Any]], first: int, prev_hash: str) -> str:
    """Number one stream's rows from `first` and link each to the one before; the last one's hash. The
    records hashed are those the events API serves, so they are what the followers of committed events get
    (registered here to be told after the commit)."""
    written = _written(session)
    for offset, row in enumerate(rows):
        row["seq"] = first + offset
        row["prev_hash"] = prev_hash
        record = served(row)
        prev_hash = link(record)
        if written is not None:
            written.append((row["stream"], record))
    return prev_hash


def _written(session: Session) -> list[event_feed.Committed] | None:
    """Where this unit of work collects its events' records for the followers (None: nobody follows)."""
    journal = queued(session)
    if journal is None or not event_feed.following():
        return None
    after_commit(session, "event_feed", _tell_followers)
    return journal.written


def _tell_followers(session: Session) -> None:
    journal = queued(session)
    if journal is not None and journal.written:
        event_feed.tell(journal.written)


def _by_stream(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(row["stream"], []).append(row)
    return grouped


def write_events(session: Session) -> int:
    """Number, chain and insert the queued events now; the last sequence number given (0 if none)."""
    journal = queued(session)
    if journal is None or not journal.events:
        return 0
    rows = journal.events
    grouped = _by_stream(rows)
    for stream in sorted(grouped):  # stream rows are locked in one global order
        first, prev_hash = _reserved(session, stream, len(grouped[stream]))
        last_hash = _chain(session, grouped[stream], first, prev_hash)
        session.execute(_SET_LAST_HASH, {"p_stream": stream, "p_hash": last_hash})
    session.execute(_EVENTS.insert(), rows)  # one cached statement, its rows sent in one batch
    journal.events = []
    return int(rows[-1]["seq"])


def write_entries(session: Session) -> None:
    """Insert the queued ledger entries now (a read of them before the commit; they take no lock)."""
    journal = queued(session)
    if journal is not None and journal.entries:
        session.execute(_ENTRIES.insert(), journal.entries)
        journal.entries = []


def _write_audit(session: Session, journal: Journal) -> None:
    if journal.audit:
        session.execute(_AUDIT.insert(), journal.audit)
        journal.audit = []


def _refuse(session: Session, wallet: str, change: int) -> PaymentRequired:
    have = int(session.execute(select(_WALLETS.c.balance).where(_WALLETS.c.id == wallet)).scalar() or 0)
    return PaymentRequired(
        f"balance {have} is less than the {-change} tokens needed", balance=have, required=-change
    )


def _apply(session: Session, changes: list[tuple[str, int]]) -> None:
    # A conditional UPDATE per wallet, in id order: a debit never takes a balance below zero, and the row
    # lock each takes is held to the commit.
    for wid, change in changes:
        if session.execute(_APPLY, {"p_wid": wid, "p_change": change}).first() is None:
            raise _refuse(session, wid, change)


def _net_changes(journal: Journal) -> list[tuple[str, int]]:
    changes = sorted((wid, change) for wid, change in journal.changes.items() if change)
    journal.changes = {}
    return changes


def write(session: Session) -> None:
    """The finisher: everything queued, just before the commit."""
    journal = queued(session)
    if journal is None:
        return
    if _is_postgresql(session) and len({row["stream"] for row in journal.events}) <= 1:
        _write_combined(session, journal)
        return
    write_events(session)
    _write_audit(session, journal)
    write_entries(session)
    _apply(session, _net_changes(journal))


# ---- PostgreSQL: one statement ----

_EVENT_COLUMNS = (
    ("seq", "integer"),
    ("type", "text"),
    ("actor_id", "text"),
    ("actor_name", "text"),
    ("actor_kind", "text"),
    ("section_id", "text"),
    ("data", "text"),  # JSON text, cast to jsonb on insert
    ("created_at", "timestamptz"),
    ("correlation_id", "text"),
    ("in_response_to", "text"),
    ("prev_hash", "text"),
)
_AUDIT_COLUMNS = (
    ("key_hash", "text"),
    ("actor_id", "text"),
    ("op", "text"),
    ("entity_type", "text"),
    ("entity_id", "text"),
    ("before_json", "text"),
    ("after_json", "text"),
    ("request_id", "text"),
    ("ip_country", "text"),
    ("created_at", "timestamptz"),
)
_ENTRY_COLUMNS = (
    ("from_wallet", "text"),
    ("to_wallet", "text"),
    ("amount", "bigint"),
    ("reason", "text"),
    ("topic_id", "text"),
    ("ref", "text"),
    ("created_at", "timestamptz"),
)


def _unnest(prefix: str, columns: tuple[tuple[str, str], ...]) -> str:
    return "unnest(" + ", ".join(f"CAST(:{prefix}_{name} AS {kind}[])" for name, kind in columns) + ")"


def _names(columns: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(name for name, _kind in columns)


@cache
def _combined(
    events: bool, audit: bool, entries: bool, wallets: int, expected: bool = False
) -> DriverStatement:
    """The statement for one shape of unit of work (made once per shape, sent as the driver's SQL). With
    `expected`, the stream's counter is advanced only if it still holds :expected_seq, and nothing else is
    written unless it was: its first answer says whether (1) or not (0)."""
    ctes: list[str] = []
    answers: list[str] = []
    before = ""  # a condition that makes the next locking CTE wait for the one before it
    only = ""  # what every write of the statement waits for (the optimistic counter's advance)
    if events and expected:
        ctes.append(
            "h AS (UPDATE event_streams SET last_seq = last_seq + :n, last_hash = :last_hash "
            "WHERE stream = :stream AND last_seq = :expected_seq RETURNING 1 AS moved)"
        )
        answers.append("(SELECT count(*) FROM h)")
        only = " WHERE EXISTS (SELECT 1 FROM h)"
    elif events:
        # The stream's counter is locked already: its reservation came first (_write_combined).
        ctes.append("h AS (UPDATE event_streams SET last_hash = :last_hash WHERE stream = :stream)")
    if events:
        picked = ", ".join(
            "CAST(u.data AS jsonb)" if name == "data" else f"u.{name}" for name, _kind in _EVENT_COLUMNS
        )
        ctes.append(
            f"e AS (INSERT INTO events (stream, {_names(_EVENT_COLUMNS)}) "
            f"SELECT :stream, {picked} "
            f"FROM {_unnest('e', _EVENT_COLUMNS)} AS u({_names(_EVENT_COLUMNS)}){only})"
        )
    if audit:
        ctes.append(
            f"a AS (INSERT INTO audit_entries ({_names(_AUDIT_COLUMNS)}) "
            f"SELECT * FROM {_unnest('a', _AUDIT_COLUMNS)} AS u{only})"
        )
    if entries:
        ctes.append(
            f"l AS (INSERT INTO ledger_entries ({_names(_ENTRY_COLUMNS)}) "
            f"SELECT * FROM {_unnest('l', _ENTRY_COLUMNS)} AS u{only})"
        )
    # With `expected`, every wallet waits for the counter's advance (the stream's lock first, then the
    # wallets', the usual order) and moves only if it happened.
    moved = " AND EXISTS (SELECT 1 FROM h)" if only else ""
    for i in range(wallets):
        ctes.append(
            f"w{i} AS (UPDATE wallets SET balance = balance + :change{i} "
            f"WHERE id = :wallet{i} AND balance + :change{i} >= 0{moved}{before} RETURNING id)"
        )
        answers.append(f"(SELECT count(*) FROM w{i})")
        before = f" AND (SELECT count(*) FROM w{i}) >= 0"
    return DriverStatement.of(text(f"WITH {', '.join(ctes)} SELECT {', '.join(answers) or '1'}"))


def _columns(prefix: str, columns: tuple[tuple[str, str], ...], rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {f"{prefix}_{name}": [row[name] for row in rows] for name, _kind in columns}


def _chained(session: Session, rows: list[dict[str, Any]], first: int, prev_hash: str) -> dict[str, Any]:
    """The event parameters of the combined statement but their data (`e_data`, the same whatever the
    numbering), numbered from `first` and chained from `prev_hash`."""
    last_hash = _chain(session, rows, first, prev_hash)
    columns = tuple(column for column in _EVENT_COLUMNS if column[0] != "data")
    return {"last_hash": last_hash, **_columns("e", columns, rows)}


def _write_combined(session: Session, journal: Journal) -> None:
    changes = _net_changes(journal)
    if not (journal.events or journal.audit or journal.entries or changes):
        return
    fused, after = changes[:_MAX_FUSED_WALLETS], changes[_MAX_FUSED_WALLETS:]
    params: dict[str, Any] = {}
    for i, (wid, change) in enumerate(fused):
        params[f"wallet{i}"] = wid
        params[f"change{i}"] = change
    if journal.audit:
        params.update(_columns("a", _AUDIT_COLUMNS, journal.audit))
    if journal.entries:
        params.update(_columns("l", _ENTRY_COLUMNS, journal.entries))
    shape = (bool(journal.events), bool(journal.audit), bool(journal.entries), len(fused))
    answer: Sequence[Any] | None = None
    if journal.events:
        stream = journal.events[0]["stream"]
        n = len(journal.events)
        params["stream"] = stream
        params["e_data"] = [json.dumps(row["data"]) for row in journal.events]
        expected = journal.expected.pop(stream, None)
        if expected is not None:  # numbered from what was read: written only if the counter still holds it
            last_seq, last_hash = expected
            first = last_seq + 1
            prev_hash = last_hash if last_hash is not None else GENESIS if first == 1 else GENESIS_V202
            mark = len(journal.written)
            params.update(expected_seq=last_seq, n=n, **_chained(session, journal.events, first, prev_hash))
            answer = _combined(*shape, expected=True).one(session, params)
            if answer[0]:
                answer = answer[1:]
            else:  # another writer moved the counter since: nothing was written, reserve as usual
                del journal.written[mark:]
                answer = None
        if answer is None:
            first, prev_hash = _reserved(session, stream, n)
            params.update(_chained(session, journal.events, first, prev_hash))
    if answer is None:
        answer = _combined(*shape).one(session, params)
    journal.events, journal.audit, journal.entries = [], [], []
    applied = answer[len(answer) - len(fused) :] if fused else ()
    for (wid, change), done in zip(fused, applied, strict=True):
        if not done:
            raise _refuse(session, wid, change)
    _apply(session, after)
