"""Recompute an event stream's hash chain from the database and name the first place it does not hold
(`concord events verify RESOURCE`).

Each event is rebuilt through the same serialisation the events API serves (domain/kernel/events.py
`to_dict`), so what is checked is what clients read. In sequence-number order:

- the numbers run 1, 2, 3 … without a gap (a removed event leaves one);
- the events before the chain (written before it existed) carry no prev_hash; the first chained event
  carries GENESIS (the stream's first event) or GENESIS-v202 (after such history), and every later one the
  hash of the event before it as served (an edited, removed or reordered event breaks the link after it);
- every `pact.log.root` covers the window from the previous root's event (or the first event) to the event
  just before it, commits to that event's hash, and is signed by its signing_key, which must be this
  server's log signing key or one the caller trusts;
- the stream's counter ends where the events end, with the last event's hash (so a removed or edited last
  event, which no later link covers, is found too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import events, log_roots
from domain.kernel.event_record import GENESIS, GENESIS_V202, link
from domain.kernel.models import Event, EventStream

PAGE = 1000


@dataclass(frozen=True)
class Break:
    """The first place a chain does not hold: the sequence number of the event that shows it, and why."""

    seq: int
    reason: str


@dataclass
class Report:
    stream: str
    events: int = 0
    unchained: int = 0  # events from before the chain (their content is covered only by signed roots)
    roots: int = 0
    first_break: Break | None = None
    trusted_keys: list[str] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return self.first_break is None

    def summary(self) -> dict[str, Any]:
        return {
            "stream": self.stream,
            "intact": self.intact,
            "events": self.events,
            "unchained": self.unchained,
            "roots": self.roots,
            "firstBreak": None
            if self.first_break is None
            else {"sequenceNumber": self.first_break.seq, "reason": self.first_break.reason},
        }


@dataclass
class _Walk:
    report: Report
    trusted: set[str]
    prev_seq: int = 0
    prev_hash: str | None = None  # hash of the previous event as served
    chained: bool = False
    root_start: int = 1  # where the next root's window must start


def _check_root(walk: _Walk, seq: int, entity_id: str, data: dict[str, Any]) -> str | None:
    expected = {
        "resource_id": entity_id,
        "window_start_seq": walk.root_start,
        "window_end_seq": seq - 1,
        "window_end_hash": walk.prev_hash,
    }
    for name, value in expected.items():
        if data.get(name) != value:
            return f"its {name} is {data.get(name)!r}, but the stream says {value!r}"
    bad = log_roots.check_signature(data)
    if bad is not None:
        return bad
    if data.get("signing_key") not in walk.trusted:
        return f"it is signed by {data.get('signing_key')}, not by this server's log signing key"
    return None


def _step(walk: _Walk, event: Event) -> Break | None:
    seq = event.seq
    if seq != walk.prev_seq + 1:
        missing = walk.prev_seq + 1
        return Break(missing, f"event {missing} is missing: the sequence goes from {walk.prev_seq} to {seq}")
    record = events.to_dict(event)
    prev_hash = record["prev_hash"]
    if prev_hash is None:
        if walk.chained:
            return Break(seq, "it carries no prev_hash, after events that do")
        walk.report.unchained += 1
    else:
        if walk.chained:
            expected = walk.prev_hash
            why = f"event {seq - 1} as served hashes to {expected}"
        else:
            expected = GENESIS if seq == 1 else GENESIS_V202
            why = "the first chained event carries " + (
                "GENESIS (it is the stream's first)" if seq == 1 else "GENESIS-v202 (after unchained events)"
            )
        if prev_hash != expected:
            return Break(
                seq,
                f"its prev_hash is {prev_hash}, but {why}: event {seq - 1} was changed, or events before "
                f"{seq} were removed or reordered",
            )
        walk.chained = True
    if event.type == log_roots.ROOT_EVENT:
        bad = _check_root(walk, seq, record["entityId"], record["data"])
        if bad is not None:
            return Break(seq, f"the signed root does not hold: {bad}")
        walk.report.roots += 1
        walk.root_start = seq
    walk.prev_seq = seq
    walk.prev_hash = link(record)
    walk.report.events += 1
    return None


async def verify(session: AsyncSession, stream: str, *, trusted_keys: list[str] | None = None) -> Report:
    """Walk the stream's events in order, recomputing its chain; the report names the first break."""
    trusted = {log_roots.signing_key_id(), *(trusted_keys or [])}
    report = Report(stream=stream, trusted_keys=sorted(trusted))
    walk = _Walk(report=report, trusted=trusted)
    after = 0
    while True:
        page = (
            await session.scalars(
                select(Event).where(Event.stream == stream, Event.seq > after).order_by(Event.seq).limit(PAGE)
            )
        ).all()
        for event in page:
            found = _step(walk, event)
            if found is not None:
                report.first_break = found
                return report
        if len(page) < PAGE:
            break
        after = page[-1].seq
    counter = (
        await session.execute(
            select(EventStream.last_seq, EventStream.last_hash).where(EventStream.stream == stream)
        )
    ).one_or_none()
    last_seq, last_hash = (0, None) if counter is None else (int(counter.last_seq), counter.last_hash)
    if last_seq > walk.prev_seq:
        missing = walk.prev_seq + 1
        report.first_break = Break(
            missing,
            f"event {missing} is missing: the stream's counter says {last_seq} events, but they end at "
            f"{walk.prev_seq}",
        )
    elif last_seq < walk.prev_seq:
        report.first_break = Break(
            last_seq + 1,
            f"event {last_seq + 1} was added behind the log's back: the stream's counter says {last_seq} "
            f"events, but they run to {walk.prev_seq}",
        )
    elif walk.chained and last_hash != walk.prev_hash:
        report.first_break = Break(
            walk.prev_seq,
            f"the last event as served hashes to {walk.prev_hash}, but the stream's counter recorded "
            f"{last_hash} when it was written: event {walk.prev_seq} was changed",
        )
    return report
