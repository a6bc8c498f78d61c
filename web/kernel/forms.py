"""Reading a posted HTML form. A body aiohttp cannot parse (a multipart type without its boundary, a part
without a name, a missing closing boundary) is the client's mistake: a 400 saying so, never a 500."""

from __future__ import annotations

from aiohttp import web
from multidict import MultiDictProxy

from domain.kernel.errors import BadRequest


async def posted(request: web.Request) -> MultiDictProxy[str | bytes | bytearray | web.FileField]:
    try:
        return await request.post()
    except ValueError as exc:  # aiohttp's parse errors (UnicodeDecodeError is one too)
        raise BadRequest(
            f"the form could not be read ({exc}); send it as application/x-www-form-urlencoded",
            code="invalid_form",
        ) from None
