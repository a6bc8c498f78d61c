"""Serving an app: aiohttp's AppRunner, with requests that cannot even be parsed answered in the app's error
format.

aiohttp answers a request it cannot parse (a request line or header over 8190 bytes, a NUL or other invalid
byte in a header, a malformed request line) itself, before any middleware runs: with a plain-text 400 and an
ERROR log line carrying a traceback. That is a client's mistake, not the server's, so here it is the app's own
JSON error (hub: `{error, detail}`; documents: `application/problem+json`) with an X-Request-Id, and one
WARNING line without a traceback. Errors of any other kind keep aiohttp's handling."""

from __future__ import annotations

import logging
from typing import ClassVar

from aiohttp import web
from aiohttp.http_exceptions import BadHttpMethod, HttpProcessingError, LineTooLong
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

from web.kernel import errors, requestid
from web.kernel.appkeys import ERROR_STYLE

log = logging.getLogger("concord.web")


def describe(exc: HttpProcessingError) -> str:
    """What was wrong, in a line (aiohttp's message repeats the offending bytes over several lines)."""
    if isinstance(exc, LineTooLong):
        return "the request line or a header line is longer than the 8190 bytes allowed"
    first = (exc.message or "").strip().splitlines()[0:1]
    text = first[0].strip().rstrip(":") if first else "malformed request"
    return f"malformed HTTP request: {text}"


class _Protocol(RequestHandler):
    __slots__ = ()
    error_style: ClassVar[str] = "hub"

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if not (isinstance(exc, HttpProcessingError) and 400 <= status < 500):
            return super().handle_error(request, status, exc, message)
        detail = describe(exc)
        rid = requestid.new()
        if isinstance(exc, BadHttpMethod):  # mostly TLS or other protocols sent to the HTTP port
            log.debug("refused a request from %s: %s (request %s)", request.remote, detail, rid)
        else:
            log.warning(
                "refused a request from %s: %s (request %s)",
                request.remote,
                detail,
                rid,
                extra={"status": status, "request_id": rid},
            )
        response = errors.render(self.error_style, status, errors.code_for(status), detail)
        response.headers["X-Request-Id"] = rid
        response.force_close()  # the rest of the stream cannot be trusted
        return response


class _HubProtocol(_Protocol):
    __slots__ = ()
    error_style = "hub"


class _ProblemProtocol(_Protocol):
    __slots__ = ()
    error_style = "problem"


class _Server(web.Server):
    protocol: ClassVar[type[_Protocol]] = _HubProtocol

    def __call__(self) -> RequestHandler:
        return self.protocol(self, loop=self._loop, **self._kwargs)


class _HubServer(_Server):
    protocol = _HubProtocol


class _ProblemServer(_Server):
    protocol = _ProblemProtocol


class Runner(web.AppRunner):
    """An AppRunner whose connections answer unparseable requests in the app's error format."""

    __slots__ = ()

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        # The same server (aiohttp built it from the app: handler, request factory, settings); only the
        # protocol it makes for each connection differs.
        server.__class__ = _ProblemServer if self.app[ERROR_STYLE] == "problem" else _HubServer
        return server
