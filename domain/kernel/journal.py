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
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from sqlalchemy import TextClause, bindparam, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from domain.kernel.db import before_commit, table_of, unit_state
from domain.kernel.errors import PaymentRequired
from domain.kernel.models import AuditEntry, Event, EventStream, LedgerEntry, Wallet

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


# ---- one statement per kind (SQLite, and what the combined statement does not take) ----


def _reserve(dialect: Any) -> Any:
    """Add n to a stream's counter (creating it), answering the new last number."""
    upsert = dialect.insert(_STREAMS).values(stream=bindparam("stream"), last_seq=bindparam("n"))
    return upsert.on_conflict_do_update(
        index_elements=[_STREAMS.c.stream], set_={"last_seq": _STREAMS.c.last_seq + upsert.excluded.last_seq}
    ).returning(_STREAMS.c.last_seq)


# Built once and executed with parameters: no per-call statement building or cache key.
_RESERVE = {"postgresql": _reserve(postgresql), "sqlite": _reserve(sqlite)}
_APPLY = (
    update(_WALLETS)
    .where(_WALLETS.c.id == bindparam("p_wid"), _WALLETS.c.balance + bindparam("p_change") >= 0)
    .values(balance=_WALLETS.c.balance + bindparam("p_change"))
    .returning(_WALLETS.c.id)
)


def _is_postgresql(session: Session) -> bool:
    return bool(session.get_bind().dialect.name == "postgresql")


def write_events(session: Session) -> int:
    """Number and insert the queued events now; the last sequence number given (0 if none)."""
    journal = queued(session)
    if journal is None or not journal.events:
        return 0
    rows = journal.events
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["stream"]] = counts.get(row["stream"], 0) + 1
    reserve = _RESERVE["postgresql" if _is_postgresql(session) else "sqlite"]
    next_seq: dict[str, int] = {}
    for stream in sorted(counts):  # stream rows are locked in one global order
        last = session.execute(reserve, {"stream": stream, "n": counts[stream]}).scalar_one()
        next_seq[stream] = int(last) - counts[stream] + 1
    for row in rows:
        row["seq"] = next_seq[row["stream"]]
        next_seq[row["stream"]] += 1
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
    ("type", "text"),
    ("actor_id", "text"),
    ("actor_name", "text"),
    ("actor_kind", "text"),
    ("section_id", "text"),
    ("data", "text"),  # JSON text, cast to jsonb on insert
    ("created_at", "timestamptz"),
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
def _combined(events: bool, audit: bool, entries: bool, wallets: int) -> TextClause:
    """The statement for one shape of unit of work (made once per shape)."""
    ctes: list[str] = []
    answers: list[str] = []
    before = ""  # a condition that makes the next locking CTE wait for the one before it
    if events:
        ctes.append(
            "s AS (INSERT INTO event_streams (stream, last_seq) VALUES (:stream, :n) ON CONFLICT (stream) "
            "DO UPDATE SET last_seq = event_streams.last_seq + excluded.last_seq RETURNING last_seq)"
        )
        picked = ", ".join(
            "CAST(u.data AS jsonb)" if name == "data" else f"u.{name}" for name, _kind in _EVENT_COLUMNS
        )
        ctes.append(
            f"e AS (INSERT INTO events (stream, seq, {_names(_EVENT_COLUMNS)}) "
            f"SELECT :stream, s.last_seq - :n + u.ord, {picked} "
            f"FROM s, {_unnest('e', _EVENT_COLUMNS)} WITH ORDINALITY AS u({_names(_EVENT_COLUMNS)}, ord) "
            "RETURNING seq)"
        )
        answers.append("(SELECT max(seq) FROM e)")
        before = " AND (SELECT count(*) FROM e) >= 0"
    if audit:
        ctes.append(
            f"a AS (INSERT INTO audit_entries ({_names(_AUDIT_COLUMNS)}) "
            f"SELECT * FROM {_unnest('a', _AUDIT_COLUMNS)})"
        )
    if entries:
        ctes.append(
            f"l AS (INSERT INTO ledger_entries ({_names(_ENTRY_COLUMNS)}) "
            f"SELECT * FROM {_unnest('l', _ENTRY_COLUMNS)})"
        )
    for i in range(wallets):
        ctes.append(
            f"w{i} AS (UPDATE wallets SET balance = balance + :change{i} "
            f"WHERE id = :wallet{i} AND balance + :change{i} >= 0{before} RETURNING id)"
        )
        answers.append(f"(SELECT count(*) FROM w{i})")
        before = f" AND (SELECT count(*) FROM w{i}) >= 0"
    return text(f"WITH {', '.join(ctes)} SELECT {', '.join(answers) or '1'}")


def _columns(prefix: str, columns: tuple[tuple[str, str], ...], rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {f"{prefix}_{name}": [row[name] for row in rows] for name, _kind in columns}


def _write_combined(session: Session, journal: Journal) -> None:
    changes = _net_changes(journal)
    if not (journal.events or journal.audit or journal.entries or changes):
        return
    fused, after = changes[:_MAX_FUSED_WALLETS], changes[_MAX_FUSED_WALLETS:]
    params: dict[str, Any] = {}
    if journal.events:
        params["stream"] = journal.events[0]["stream"]
        params["n"] = len(journal.events)
        rows = [{**row, "data": json.dumps(row["data"])} for row in journal.events]
        params.update(_columns("e", _EVENT_COLUMNS, rows))
    if journal.audit:
        params.update(_columns("a", _AUDIT_COLUMNS, journal.audit))
    if journal.entries:
        params.update(_columns("l", _ENTRY_COLUMNS, journal.entries))
    for i, (wid, change) in enumerate(fused):
        params[f"wallet{i}"] = wid
        params[f"change{i}"] = change
    statement = _combined(bool(journal.events), bool(journal.audit), bool(journal.entries), len(fused))
    answer = session.execute(statement, params).one()
    journal.events, journal.audit, journal.entries = [], [], []
    applied = answer[len(answer) - len(fused) :] if fused else ()
    for (wid, change), done in zip(fused, applied, strict=True):
        if not done:
            raise _refuse(session, wid, change)
    _apply(session, after)
