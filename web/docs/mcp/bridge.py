"""One aiohttp request served by an ASGI application (the MCP SDK's streamable HTTP manager is one).

Written here rather than taken from a package: the adapter published for aiohttp (aiohttp-asgi) answers
`receive()` after the body with empty chunks at once, so an application that waits for `http.disconnect`
(the SDK does, beside a streamed response) would spin. Here the body is read once by aiohttp (so its
`client_max_size` applies), handed over whole, and a later `receive()` waits until the response is done or
the client has gone; what the application sends after the client has gone is dropped. A JSON response is held
until its body is whole, so that `status_of` may settle its status from what it says.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import web

Message = MutableMapping[str, Any]
ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]
StatusOf = Callable[
    [int, bytes], int
]  # (the status the application sent, the JSON body) -> the status to send


async def serve(
    app: ASGIApp,
    request: web.Request,
    body: bytes,
    *,
    scope_extra: dict[str, Any],
    headers: dict[str, str],
    status_of: StatusOf = lambda status, _body: status,
) -> web.StreamResponse:
    """Run `app` for `request` (whose body is `body`); `headers` are added to its response, and the status of
    a JSON response is `status_of`'s."""
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.split("?", 1)[0].encode(),
        "query_string": request.query_string.encode(),
        "root_path": "",
        "headers": [(k.lower(), v) for k, v in request.raw_headers],
        "client": (request.remote or "", 0),
        "server": (request.url.host or "", request.url.port or 0),
        **scope_extra,
    }
    done = asyncio.Event()
    body_sent = False
    response: web.StreamResponse | None = None
    held: Message | None = None  # a JSON response's start, until its body is whole
    parts: list[bytes] = []

    async def receive() -> Message:
        nonlocal body_sent
        if not body_sent:
            body_sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if done.is_set():
            return  # the client has gone: what is left of the response is dropped, as ASGI servers do
        try:
            await _send(message)
        except ConnectionResetError:  # aiohttp's ClientConnectionResetError is one
            done.set()

    async def _send(message: Message) -> None:
        nonlocal held
        if message["type"] == "http.response.start":
            if _is_json(message):
                held = message
                return
            await _start(message, message["status"])
        elif message["type"] == "http.response.body":
            chunk, more = message.get("body", b""), message.get("more_body", False)
            if held is not None:
                parts.append(chunk)
                if more:
                    return
                whole, start, held = b"".join(parts), held, None
                await _start(start, status_of(start["status"], whole))
                chunk = whole
            if response is not None:
                await response.write(chunk)
                if not more:
                    await response.write_eof()
                    done.set()

    async def _start(message: Message, status: int) -> None:
        nonlocal response
        response = web.StreamResponse(status=status)
        for name, value in message.get("headers", []):
            response.headers.add(name.decode("latin-1"), value.decode("latin-1"))
        response.headers.update(headers)
        await response.prepare(request)

    try:
        await app(scope, receive, send)
    finally:
        done.set()
    if response is None:
        raise web.HTTPInternalServerError(text="the MCP server sent no response")
    return response


def _is_json(start: Message) -> bool:
    return any(
        name.lower() == b"content-type" and value.split(b";")[0].strip().lower() == b"application/json"
        for name, value in start.get("headers", [])
    )
