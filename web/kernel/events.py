"""The wire of event streams on both apps: the event record (PACT v2.0.3 §6.1 beside the fields served
before), the pages and polls that carry it, and the cursor every one of them takes.

The record is built by the domain (domain/kernel/event_record.py), because the hash chain hashes it exactly
as served; `Event` declares it field for field, and the tests check every served event against it, so the
two cannot drift apart.

A cursor is a sequence number, written `n` or `evt_n`, on every endpoint that takes one (`after` of the
event lists, `since` of poll); nothing, or 0, is the start of the stream. The event lists answer `nextCursor`
as `n` and poll answers `cursor` as `evt_n`, as they always did; either is accepted by both.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from domain.kernel import event_views
from domain.kernel import events as kernel_events
from domain.kernel.event_record import CURSOR_PREFIX, ActorKind, EntityType
from domain.kernel.events import MAX_SEQ
from web.kernel.wire import Exact, Timestamp, decimal_at_most

# What the domain's parse_cursor accepts, stated in the OpenAPI documents (and checked there first).
CURSOR_PATTERN = rf"^(?:(?:{CURSOR_PREFIX})?{decimal_at_most(MAX_SEQ)})?$"
CURSOR_WORDS = "an event cursor: a sequence number n or evt_n (the same on both apps)"


class _Query(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


class EventsQuery(_Query):
    after: str | None = Field(
        default=None,
        max_length=14,
        pattern=CURSOR_PATTERN,
        description=f"Only events after this one: {CURSOR_WORDS}; omitted or 0: from the first event.",
    )
    limit: int = Field(default=50, ge=1, le=200)


class StreamQuery(_Query):
    after: str | None = Field(
        default=None,
        max_length=14,
        pattern=CURSOR_PATTERN,
        description=f"Start after this event: {CURSOR_WORDS}; omitted or 0: from the first event. A "
        "`Last-Event-ID` header (what a reconnecting EventSource sends) wins over it.",
    )


STREAM_SUMMARY = (
    "Live events as Server-Sent Events: each message is `id: evt_<n>`, `event: <eventType>` and `data:` the "
    "event's record exactly as the event list serves it; resumes after `Last-Event-ID` (or `after`), "
    "replaying what was missed, then follows new events; `: keep-alive` comments while idle"
)
STREAM_ERRORS = {
    429: "This client (its key, else its address) holds as many event streams on this process as it may",
    503: "The process serves as many event streams as it may, or is stopping: retry",
}


class PollQuery(_Query):
    since: str | None = Field(
        default=None,
        max_length=14,
        pattern=CURSOR_PATTERN,
        description=f"Cursor from the last poll, {CURSOR_WORDS}; omitted: from the start.",
    )
    sectionId: str | None = Field(default=None, max_length=256)
    limit: int = Field(default=50, ge=1, le=200)


class Event(Exact):
    """One event. Its fields are hashed, as served, into the next event's `prev_hash`."""

    id: int = Field(description="Sequence number in the resource's stream: 1, 2, 3 … without gaps")
    sequenceNumber: int = Field(description="The same sequence number (PACT §6.1)")
    type: str = Field(description="Dot-delimited event type, e.g. pact.proposal.created")
    agentId: str | None = Field(description="Who acted (null for the system); the same as actorId")
    agentName: str | None = Field(description="Their name; the same as actorDisplay")
    actorKind: ActorKind
    sectionId: str | None
    data: dict[str, Any] = Field(description="What happened, by event type")
    createdAt: Timestamp
    eventId: str = Field(description="The event's id in cursor form, evt_<sequence number>")
    epochMs: int = Field(description="createdAt in milliseconds since the Unix epoch")
    actorId: str | None
    actorDisplay: str
    eventType: str = Field(description="The same as type (PACT §6.1)")
    entityType: EntityType = Field(description="pact-document for a document, pact-fact for a hub topic")
    entityId: str = Field(description="The document's or topic's id")
    correlationId: str | None = Field(
        description="Links the events of one thing: a proposal's id on its created, vote, merged … events"
    )
    inResponseTo: str | None = Field(description="What this event answers: an event's evt_n, or a thing's id")
    payloadJson: str = Field(description="`data` as RFC 8785 canonical JSON text (PACT §6.1)")
    prev_hash: str | None = Field(
        description="Unpadded base64url SHA-256 of the RFC 8785 canonical JSON of the previous event of this "
        "stream exactly as served here; GENESIS on a stream's first event, GENESIS-v202 on the first event "
        "after history from before the chain, null on that history (PACT §6.4)"
    )


class EventPage(Exact):
    events: list[Event]
    nextCursor: str = Field(description="Send as `after` for the next page")
    hasMore: bool

    @staticmethod
    def fields(page: kernel_events.Page) -> dict[str, Any]:
        """The page as this model's wire dict: its events as served (each hashed as it is), not rebuilt."""
        return {"events": page.events, "nextCursor": page.next_cursor, "hasMore": page.has_more}


class Change(Event):
    """An event as poll serves it: the event record plus the names poll clients read."""

    agent: str | None = Field(description="The agent's name")
    section: str | None = Field(description="The section id")
    cursor: str = Field(description="This event's cursor, evt_<sequence number>")


class Poll(Exact):
    since: str
    changes: list[Change]
    cursor: str = Field(description="Send as `since` on the next poll")
    hasMore: bool

    @classmethod
    def of(cls, page: event_views.PollPage) -> Poll:
        return cls(
            since=page.since,
            changes=[
                Change(**e, agent=e["agentName"], section=e["sectionId"], cursor=e["eventId"])
                for e in page.events
            ],
            cursor=page.cursor,
            hasMore=page.has_more,
        )


class TranscriptQuery(_Query):
    since: str | None = Field(
        default=None,
        max_length=14,
        pattern=CURSOR_PATTERN,
        description=f"Only events after this one: {CURSOR_WORDS} (the latestEventId of the last read); "
        "omitted: from the first event.",
    )
    limit: int = Field(default=200, ge=1, le=1000)


class TranscriptEvent(Event):
    """An event as the transcript serves it: the event record plus the names the PACT CLI prints."""

    agent: str | None = Field(description="The agent's (or person's) name")
    timestamp: Timestamp = Field(description="The same as createdAt")
    summary: str | None = Field(
        description="What the event is about in one line, from its data (a summary, goal, boundary, reason, "
        "question, message or content); null when it holds none"
    )


class Transcript(Exact):
    """A resource's event log since a cursor (PACT v2.0.3 §4.4, the CLI's `transcript`)."""

    events: list[TranscriptEvent]
    latestEventId: str | None = Field(
        description="The last event answered (evt_n), else the `since` sent; send it as `since` next"
    )
    hasMore: bool = Field(description="Whether more events follow: ask again with since=latestEventId")

    @classmethod
    def of(cls, found: event_views.Transcript) -> Transcript:
        return cls(
            events=[
                TranscriptEvent(
                    **e.record,
                    agent=e.record["agentName"],
                    timestamp=e.record["createdAt"],
                    summary=e.summary,
                )
                for e in found.entries
            ],
            latestEventId=found.latest,
            hasMore=found.has_more,
        )
