"""One event as both apps serve it: PACT v2.0.3 §6.1's fields beside the ones Concord served before, built
from the stored columns alone, and its hash, which the next event of the stream carries as `prev_hash`.

The hash chain (§6.4) hashes this record exactly as the events API serves it, so that any client can
recompute a chain from what it read: `link(record)` is the unpadded base64url SHA-256 of the record's
RFC 8785 canonical JSON, the whole record including its own `prev_hash`. The record's form is therefore
part of the chain, as a signed document's format is part of its signature: a field is never renamed or
dropped, and one added later is served only on events written after it existed (absent from older
records, never null), so that no stored hash changes. tests/test_event_chain.py pins a known record's hash.

Its vocabularies are the protocol's: `ActorKind` (§6.1) and `EntityType`, PACT's resource type prefixed
with `pact-` (a document is `pact-document`; a hub topic is PACT's `fact` resource type, §14.5, so
`pact-fact`); the agents' work feeds are Concord's own (`concord.work-feed`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

import rfc8785

from domain.kernel.clock import iso

# prev_hash of a stream's first event, and of the first chained event of a stream whose history predates
# the chain (PACT §6.4: "GENESIS-v202" marks the transition; the events before it carry none).
GENESIS = "GENESIS"
GENESIS_V202 = "GENESIS-v202"
CURSOR_PREFIX = "evt_"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class ActorKind(StrEnum):
    """Who produced an event (PACT §6.1)."""

    INDIVIDUAL = "Individual"
    AI_AGENT = "AiAgent"
    GOVERNANCE_GROUP = "GovernanceGroup"
    SYSTEM = "System"


class EntityType(StrEnum):
    """What kind of resource an event stream belongs to, as events name it."""

    DOCUMENT = "pact-document"
    TOPIC = "pact-fact"
    WORK_FEED = "concord.work-feed"


# A stream is named "<resource type>:<resource id>" (domain/kernel/events.py stream_of).
ENTITY_TYPES: dict[str, EntityType] = {
    "document": EntityType.DOCUMENT,
    "topic": EntityType.TOPIC,
    "work": EntityType.WORK_FEED,
}


def cursor_of(seq: int) -> str:
    """The event's id in the cursor form both apps accept: evt_<sequence number>."""
    return f"{CURSOR_PREFIX}{seq}"


def epoch_ms(at: datetime) -> int:
    """Milliseconds since the Unix epoch, exact (no float rounding); a naive value is UTC."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return (at - _EPOCH) // timedelta(milliseconds=1)


def canonical(value: Any) -> bytes:
    """RFC 8785 (JSON Canonicalization Scheme) encoding. A value of ASCII keys, strings, integers within
    ±2**53, booleans and nulls (every event record so far) is encoded by the standard library's C encoder,
    whose output for such a value is RFC 8785's (keys sorted: for ASCII keys UTF-16 order is code-point order;
    strings escaped alike); anything else (a float, a non-ASCII key, a lone surrogate, a larger integer) by
    rfc8785 itself. tests/test_event_chain.py checks both agree."""
    if _plain(value):
        try:
            return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()
        except UnicodeEncodeError:  # a lone surrogate: rfc8785 says why it cannot be encoded
            pass
    return rfc8785.dumps(value)


def _plain(value: Any) -> bool:
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return True
    if isinstance(value, int):
        return -_EXACT < value < _EXACT
    if isinstance(value, dict):
        return all(isinstance(k, str) and k.isascii() and _plain(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_plain(item) for item in value)
    return False


# RFC 8785 numbers are IEEE 754 doubles: an integer beyond 2**53 cannot be canonicalised exactly, and
# NaN and the infinities not at all. Such a number in an event's data is stored as its decimal text.
_EXACT = 2**53


def as_stored(data: Mapping[str, Any] | None) -> dict[str, Any]:
    """An event's data as the database gives it back (JSON round trip: tuples become lists, and data that
    is not JSON fails here, at the append, not at the commit), with every number the canonical form can
    carry exactly, so that serving and hashing the event can never fail on its data."""
    loaded = _exact(json.loads(json.dumps(dict(data or {}))))
    assert isinstance(loaded, dict)
    return loaded


def _exact(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _exact(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_exact(item) for item in value]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value if abs(value) < _EXACT else str(value)


def served(row: Mapping[str, Any]) -> dict[str, Any]:
    """The served record of an event from its columns (an Event's, or a row the journal is about to
    insert): stream, seq, type, actor_id, actor_name, actor_kind, section_id, data, created_at,
    correlation_id, in_response_to and prev_hash."""
    resource_type, _, resource_id = str(row["stream"]).partition(":")
    seq = int(row["seq"])
    data = row["data"]
    return {
        # The fields Concord served before (kept for the clients that read them) …
        "id": seq,
        "sequenceNumber": seq,
        "type": row["type"],
        "agentId": row["actor_id"],
        "agentName": row["actor_name"],
        "actorKind": row["actor_kind"],
        "sectionId": row["section_id"],
        "data": data,
        "createdAt": iso(row["created_at"]),
        # … and PACT §6.1's (its `id` is the integer above; PACT clients read `eventId` first).
        "eventId": cursor_of(seq),
        "epochMs": epoch_ms(row["created_at"]),
        "actorId": row["actor_id"],
        "actorDisplay": row["actor_name"] or "",
        "eventType": row["type"],
        "entityType": str(ENTITY_TYPES.get(resource_type, resource_type)),
        "entityId": resource_id,
        "correlationId": row["correlation_id"],
        "inResponseTo": row["in_response_to"],
        "payloadJson": canonical(data).decode(),
        "prev_hash": row["prev_hash"],
    }


def link(record: Mapping[str, Any]) -> str:
    """The hash of a served record, as the next event's prev_hash: unpadded base64url SHA-256 of its
    RFC 8785 canonical JSON."""
    digest = hashlib.sha256(canonical(dict(record))).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
