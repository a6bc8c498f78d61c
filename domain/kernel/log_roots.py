"""Signed roots of the event streams (PACT v2.0.3 §6.4): a `pact.log.root` event that commits the server to
what a stream looked like up to a sequence number, signed with the server's Ed25519 log signing key.

A root's data (served as its `payloadJson` too) is `{resource_id, window_start_seq, window_end_seq,
window_end_hash, signature, signing_key}`. The window runs from the previous root's own event (or the first
event) to the last event before this root, and `window_end_hash` is that last event's hash as the chain
computes it (domain/kernel/event_record.py `link`), so it is also the root event's own `prev_hash`. The
signature is Ed25519 over the RFC 8785 canonical JSON of the first four fields, unpadded base64url.
`signing_key` is the public key as a `did:key` (multibase base58btc of the multicodec-tagged raw key):
whoever reads it has the key, and compares it with the one the server publishes (`signing_key_id()`, which
the implementation profile serves as `endpoints.logSigningKey`).

The key is `CONCORD_LOG_SIGNING_KEY` (an Ed25519 private key: PKCS#8 PEM, or the base64 of its 32-byte seed
or of its PKCS#8 DER) or, unset, one generated once into `<data_dir>/log-signing-key.pem` (mode 0600).

A stream gets a root when it has events since its last root and the window has been open for
`CONCORD_LOG_ROOT_HOURS` (a sweep looks every hour); streams from before roots existed are due at once, so
their history is signed soon after the upgrade. `concord events root RESOURCE` signs one now.
"""

from __future__ import annotations

import binascii
import os
import uuid
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import events
from domain.kernel.clock import utcnow
from domain.kernel.context import SYSTEM
from domain.kernel.event_record import canonical, link
from domain.kernel.models import Event, EventStream
from domain.kernel.settings import Settings, get_settings
from domain.kernel.signing_keys import b64url, key_id, parse_private_key, pem, public_key_of, unb64

ROOT_EVENT = "pact.log.root"
KEY_FILE = "log-signing-key.pem"
SIGNED_FIELDS = ("resource_id", "window_start_seq", "window_end_seq", "window_end_hash")
# Streams one sweep signs at most (each holds its counter's lock until the sweep commits).
SWEEP_BATCH = 200


# ---- the key ----------------------------------------------------------------------------------------


@lru_cache(maxsize=8)
def _key_in(data_dir: Path) -> Ed25519PrivateKey:
    path = data_dir / KEY_FILE
    try:
        return parse_private_key(path.read_text(encoding="ascii"))
    except FileNotFoundError:
        pass
    data_dir.mkdir(parents=True, exist_ok=True)
    key = Ed25519PrivateKey.generate()
    # Written whole under a name of its own, then linked into place: another process of this data directory
    # reads either no file or the complete key, and the first link wins.
    draft = data_dir / f".{KEY_FILE}.{os.getpid()}.{uuid.uuid4().hex}"
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(pem(key))
        os.link(draft, path)
    except FileExistsError:  # another process wrote it first: use theirs
        return parse_private_key(path.read_text(encoding="ascii"))
    finally:
        draft.unlink(missing_ok=True)
    return key


@lru_cache(maxsize=8)
def _configured(text: str) -> Ed25519PrivateKey:
    return parse_private_key(text)


def signing_key(settings: Settings | None = None) -> Ed25519PrivateKey:
    """CONCORD_LOG_SIGNING_KEY, or the key generated once under the data directory."""
    settings = settings or get_settings()
    if settings.log_signing_key:
        return _configured(settings.log_signing_key)
    return _key_in(settings.data_dir.resolve())


def signing_key_id(settings: Settings | None = None) -> str:
    """The did:key of this server's log signing key (the profile's `endpoints.logSigningKey`)."""
    return key_id(signing_key(settings).public_key())


# ---- a root -----------------------------------------------------------------------------------------


def signed_part(data: dict[str, Any]) -> bytes:
    """What a root's signature covers: the canonical JSON of its four window fields."""
    return canonical({name: data[name] for name in SIGNED_FIELDS})


def check_signature(data: dict[str, Any]) -> str | None:
    """Why a root's signature does not hold under the key it names (None when it holds)."""
    try:
        public = public_key_of(str(data.get("signing_key", "")))
        public.verify(unb64(str(data.get("signature", ""))), signed_part(data))
    except KeyError as exc:
        return f"the root has no {exc.args[0]}"
    except (ValueError, binascii.Error) as exc:
        return f"its signing_key or signature cannot be read ({exc})"
    except InvalidSignature:
        return "its signature does not verify under its signing_key"
    return None


@dataclass(frozen=True)
class Root:
    stream: str
    seq: int  # the root event's own sequence number
    data: dict[str, Any]


_COUNTER = select(EventStream.last_seq, EventStream.last_hash, EventStream.root_seq)


async def sign_now(session: AsyncSession, stream: str, settings: Settings | None = None) -> Root | None:
    """Append a signed root over the stream's events since its last root (None when there are none)."""
    found = (
        await session.execute(_COUNTER.where(EventStream.stream == stream).with_for_update())
    ).one_or_none()
    if found is None or found.last_seq <= found.root_seq:
        return None
    end = int(found.last_seq)
    end_hash = found.last_hash
    if end_hash is None:  # a window of history from before the chain: hash its last event as served
        last = await session.scalar(select(Event).where(Event.stream == stream, Event.seq == end))
        if last is None:
            raise LookupError(f"{stream}: the counter says {end} events but event {end} is missing")
        end_hash = link(events.to_dict(last))
    key = signing_key(settings)
    window = {
        "resource_id": stream.partition(":")[2],
        "window_start_seq": int(found.root_seq) or 1,
        "window_end_seq": end,
        "window_end_hash": str(end_hash),
    }
    data = {
        **window,
        "signature": b64url(key.sign(signed_part(window))),
        "signing_key": key_id(key.public_key()),
    }
    seq = await events.append_numbered(session, stream, ROOT_EVENT, SYSTEM, data=data)
    await session.execute(
        update(EventStream)
        .where(EventStream.stream == stream)
        .values(root_seq=seq, window_opened_at=utcnow())
    )
    return Root(stream=stream, seq=seq, data=data)


async def sign_due(session: AsyncSession) -> int:
    """The sweep: sign a root on every stream with events since its last root whose window has been open
    for CONCORD_LOG_ROOT_HOURS (or that predates roots); the number of roots signed."""
    settings = get_settings()
    cutoff = utcnow() - timedelta(hours=settings.log_root_hours)
    due = (
        await session.scalars(
            select(EventStream.stream)
            .where(
                EventStream.last_seq > EventStream.root_seq,
                or_(EventStream.window_opened_at.is_(None), EventStream.window_opened_at <= cutoff),
            )
            .order_by(EventStream.stream)  # counters locked in one global order
            .limit(SWEEP_BATCH)
        )
    ).all()
    signed = 0
    for stream in due:
        if await sign_now(session, stream, settings) is not None:
            signed += 1
    return signed
