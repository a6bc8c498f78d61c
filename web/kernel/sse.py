"""A resource's events as Server-Sent Events (PACT v2.0.3 §7.2): `GET /api/pact/{id}/events/stream` on both
apps, for a hub topic and for a document.

Each event is one message: `id: evt_<n>`, `event: <eventType>`, `data: <the event's record as JSON>`, the
record byte for byte as the event list serves it (so a client can chain its `prev_hash` from a stream as from
a page). A stream starts after the cursor in `Last-Event-ID` (what a reconnecting EventSource sends), else
after `?after=`, else at the stream's first event.

On (re)connecting a stream first replays from the database what the client missed (keyset pages), then
follows the live events of the process's hub (infra/live/hub.py) without a gap or a repeat: it replays the
bulk, then starts listening, then replays again what committed meanwhile, and drops every live event at or
below the last one it sent. The live events are those of every process and machine (the hub's transports).

While no event comes a `: keep-alive` comment goes out every `CONCORD_SSE_HEARTBEAT_SECONDS`. A stream ends
when its client reads too slowly (`CONCORD_SSE_QUEUE_EVENTS` waiting), when the process stops, and after
`CONCORD_SSE_MAX_SECONDS` (so that a client's access is checked again); the first message's `retry:` tells
the client how soon to reconnect, with `Last-Event-ID`, losing nothing. A process serves at most
`CONCORD_SSE_MAX_CONNECTIONS` streams; one more is a 503 with `Retry-After`; and one client (its key, else
its address) at most `CONCORD_SSE_MAX_PER_CLIENT` of them; one more is a 429 with `Retry-After`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import time
from typing import Any

from aiohttp import web
from pydantic import BaseModel, Field

from domain.kernel import events, keys
from domain.kernel.errors import Unavailable
from domain.kernel.event_record import cursor_of
from infra.live.hub import Ended, LiveEvent
from infra.metrics import process_metrics
from web.kernel.appkeys import APP_NAME, REQUEST_ID
from web.kernel.request import client_address, presented_key, public_url, runtime

log = logging.getLogger("concord.web")

PATH = "/api/pact/{id}/events/stream"
MEDIA_TYPE = "text/event-stream"
RETRY_MS = 2000  # how soon a client reconnects after a stream ends
KEEPALIVE = b": keep-alive\n\n"
REPLAY_PAGE = 200
# The kernel's send buffer of a stream's connection (Linux doubles it): a fixed size instead of TCP's
# autotuning (up to 4 MiB), so that a client that stops reading holds little memory and its stream is
# ended after a bounded backlog; 1 MiB/s to a client 100 ms away.
SEND_BUFFER = 64 * 1024


class StreamMessage(BaseModel):
    """One message of the stream, as an EventSource parses it (the OpenAPI documents describe each message
    of `text/event-stream` by this schema). The first message carries only `retry`."""

    id: str | None = Field(default=None, description="The event cursor evt_<n> (Last-Event-ID)")
    event: str | None = Field(default=None, description="The event's type, e.g. pact.proposal.merged")
    data: str | None = Field(
        default=None,
        description="The event's record as JSON, byte for byte as the event list serves it (its `prev_hash` "
        "chains as there)",
    )
    retry: int | None = Field(default=None, description="Milliseconds to wait before reconnecting")


def realtime_endpoint(base_url: str | None = None) -> str:
    """The realtime endpoint template of an app (`endpoints.realtime` of /.well-known/pact.json): the SSE
    stream of the resource `{id}`, under `base_url` (the app's public address) when given."""
    return f"{base_url.rstrip('/')}{PATH}" if base_url else PATH


def request_realtime_endpoint(request: web.Request) -> str:
    """The realtime endpoint template as the app that answers `request` publishes it."""
    base = runtime(request).settings.public_url
    if base:
        return public_url(request, PATH)
    return realtime_endpoint(f"{request.scheme}://{request.host}")


def message(seq: int, event_type: str, record: dict[str, Any]) -> bytes:
    """One SSE message: the record serialised as the event list serves it (routing.json_response)."""
    data = json.dumps(record, separators=(",", ":"), default=str)
    kind = event_type.replace("\r", " ").replace("\n", " ")
    return f"id: {cursor_of(seq)}\nevent: {kind}\ndata: {data}\n\n".encode()


def encoded(event: LiveEvent) -> bytes:
    """The event's message, made once for every listener of the process."""
    if event.encoded is None:
        event.encoded = message(event.seq, event.type, event.record)
    return event.encoded


def start_after(request: web.Request, after: str | None) -> int:
    """The cursor a stream starts after: `Last-Event-ID` when the client sends one, else `?after=`."""
    last = request.headers.get("Last-Event-ID", "").strip()
    if last:
        return events.parse_cursor(last, field="Last-Event-ID")
    return events.parse_cursor(after, field="after")


def _bound_send_buffer(request: web.Request) -> None:
    sock = request.transport.get_extra_info("socket") if request.transport is not None else None
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)


async def _replay(request: web.Request, response: web.StreamResponse, stream: str, after: int) -> int:
    """Send every event after `after` that has committed; the last one sent."""
    db = runtime(request).db
    while True:
        async with db.read() as session:  # a page's read only: no connection is held while the client reads
            page = await events.page(session, stream, after=after, limit=REPLAY_PAGE)
        found = page.events
        if found:
            await response.write(b"".join(message(e["sequenceNumber"], e["type"], e) for e in found))
            after = page.last_seq
        if not page.has_more:
            return after


def _client(request: web.Request) -> str:
    """Who holds a stream, for the per-client limit: the credential it presented (as its digest), else the
    address it comes from."""
    key = presented_key(request)
    return f"key:{keys.hash_key(key)}" if key else f"addr:{client_address(request)}"


async def respond(request: web.Request, stream: str, after: int) -> web.StreamResponse:
    """Serve `stream` from after `after` until the client leaves or the stream ends (see the module)."""
    live = runtime(request).live
    app = request.app[APP_NAME]
    with live.admitted(_client(request)):
        response = web.StreamResponse(
            headers={
                "Content-Type": MEDIA_TYPE,
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",  # nginx: pass each message on at once
                "X-Request-Id": request[REQUEST_ID],
            }
        )
        _bound_send_buffer(request)
        await response.prepare(request)
        metrics = process_metrics()
        metrics.event_stream(app, opened=True)
        ended = Ended.CLIENT  # unless something else ends it first
        try:
            ended = await _serve(request, response, stream, after)
        except ConnectionError:
            pass  # the client went away
        except Unavailable:
            ended = Ended.SHUTDOWN  # the process began stopping meanwhile: the client reconnects
        except Exception:
            # The response has begun: nothing but its end can tell the client (which resumes from its last
            # event); the operator gets the trace.
            ended = Ended.ERROR
            log.exception("event stream %s ended by an error (request %s)", stream, request[REQUEST_ID])
        finally:
            metrics.event_stream(app, opened=False, ended=ended)
        return response


async def _serve(request: web.Request, response: web.StreamResponse, stream: str, after: int) -> Ended:
    rt = runtime(request)
    ends = time.monotonic() + rt.settings.sse_max_seconds
    await response.write(f"retry: {RETRY_MS}\n\n".encode())
    sent = await _replay(request, response, stream, after)
    listener = await rt.live.listen(stream)
    try:
        sent = await _replay(request, response, stream, sent)
        while True:
            items = await listener.take()
            if items is None:
                return listener.ended or Ended.SHUTDOWN  # ended by the hub: too slow, or stopping
            out: list[bytes] = []
            for item in items:
                if isinstance(item, LiveEvent):
                    if item.seq > sent:
                        out.append(encoded(item))
                        sent = item.seq
                elif not out:
                    out.append(KEEPALIVE)
            if out:
                await response.write(b"".join(out))
            if time.monotonic() >= ends:
                return Ended.LIFETIME
    finally:
        rt.live.leave(listener)
