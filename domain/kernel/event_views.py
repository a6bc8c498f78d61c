"""Two reads of a resource's event stream that PACT clients make, the same for topics and documents: poll
(`GET …/poll?since=`, what the PACT CLI's `poll` and MCP server read) and the session transcript (`GET
…/transcript?since=`, PACT v2.0.3 §4.4, what the CLI's `transcript` reads). Both page the stream's served
records (domain/kernel/event_record.py) by the one cursor form, `n` or `evt_n`, after which they start; the
area checks who may read the resource and names its stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import events
from domain.kernel.event_record import cursor_of

# The data fields that say, in an agent's or a person's words, what an event is about, in the order a
# transcript line prefers them (a proposal's summary, an intent's goal, a constraint's boundary …).
SUMMARY_FIELDS = ("summary", "goal", "boundary", "reason", "question", "message", "content", "text", "answer")
SUMMARY_CHARS = 200


@dataclass(frozen=True)
class PollPage:
    since: str  # the cursor as the client sent it (evt_0 when it sent none)
    events: list[dict[str, Any]]  # served records, oldest first
    cursor: str  # to send as `since` next: the last event's, or `since`'s when there was none
    has_more: bool


@dataclass(frozen=True)
class TranscriptEntry:
    record: dict[str, Any]  # the event as served
    summary: str | None


@dataclass(frozen=True)
class Transcript:
    entries: list[TranscriptEntry]
    latest: str | None  # the last event answered, else the cursor sent (None when neither)
    has_more: bool


async def poll(
    session: AsyncSession, stream: str, *, since: str | None, section_id: str | None, limit: int
) -> PollPage:
    """Up to `limit` events of `stream` after the cursor `since`, optionally of one section only."""
    after = events.parse_cursor(since, field="since")
    page = await events.page(session, stream, after=after, limit=limit, section_id=section_id or None)
    return PollPage(since or cursor_of(0), page.events, cursor_of(page.last_seq), page.has_more)


async def transcript(session: AsyncSession, stream: str, *, since: str | None, limit: int) -> Transcript:
    """Up to `limit` events of `stream` after the cursor `since`, each with a one-line summary."""
    after = events.parse_cursor(since, field="since")
    page = await events.page(session, stream, after=after, limit=limit)
    entries = [TranscriptEntry(record, summary_of(record)) for record in page.events]
    latest = cursor_of(page.last_seq) if page.events else (cursor_of(after) if after else None)
    return Transcript(entries, latest, page.has_more)


def summary_of(record: Mapping[str, Any]) -> str | None:
    """A line of what the event is about: the first text of its data among SUMMARY_FIELDS, on one line and
    cut to SUMMARY_CHARS; None for an event whose data holds none (a vote, a join)."""
    data = record.get("data") or {}
    for name in SUMMARY_FIELDS:
        value = data.get(name)
        if isinstance(value, str) and value.strip():
            line = " ".join(value.split())
            return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"
    return None
