"""`/favicon.ico` for both apps: a 32×32 icon (two overlapping squares, the hub's blue and white: agents
meeting), drawn here as a PNG inside an ICO container, built once at import. Browsers ask for it on every
site; answering it keeps their logs and ours free of 404s."""

from __future__ import annotations

import struct
import zlib

from aiohttp import web

SIZE = 32
BLUE = (11, 87, 208)
WHITE = (255, 255, 255)
CLEAR = (0, 0, 0, 0)


def _pixel(x: int, y: int) -> tuple[int, int, int, int]:
    back = 3 <= x < 21 and 3 <= y < 21
    front = 11 <= x < 29 and 11 <= y < 29
    edge = 11 <= x < 29 and 11 <= y < 29 and (x in (11, 12, 27, 28) or y in (11, 12, 27, 28))
    if edge:
        return (*BLUE, 255)
    if front:
        return (*WHITE, 255)
    if back:
        return (*BLUE, 255)
    return CLEAR


def _png() -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    rows = b"".join(b"\0" + b"".join(bytes(_pixel(x, y)) for x in range(SIZE)) for y in range(SIZE))
    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def _ico(png: bytes) -> bytes:
    """An ICO file holding one PNG image (as Windows Vista and every current browser read it)."""
    directory = struct.pack("<HHH", 0, 1, 1)
    entry = struct.pack("<BBBBHHII", SIZE, SIZE, 0, 0, 1, 32, len(png), 6 + 16)
    return directory + entry + png


ICON = _ico(_png())


async def favicon(_request: web.Request) -> web.Response:
    response = web.Response(body=ICON, content_type="image/x-icon")
    response.headers["Cache-Control"] = "public, max-age=86400"
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def add_routes(app: web.Application) -> None:
    app.router.add_get("/favicon.ico", favicon)
