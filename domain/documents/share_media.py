"""The pictures of a shared document, read from its uploaded package: a DOCX's Markdown names each image by
its place in the package (`![Site plan](media/image1.png)`), and the share page asks for it by that name
through the link. Only raster formats a browser shows are served, only from the document's own package
(another document's image, a path, any other part of the package is not found), read off the event loop.
"""

from __future__ import annotations

import asyncio
import re
import zipfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from domain.documents import blobs
from domain.documents.models import Document
from domain.kernel.errors import NotFound
from domain.kernel.settings import get_settings

# The image types a page may show, by the name's extension (SVG is left out: it can carry script).
MEDIA_TYPES = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "bmp": "image/bmp",
}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
MAX_BYTES = 20 * 1024 * 1024  # one picture; a larger one is not served


@dataclass(frozen=True)
class Image:
    data: bytes
    media_type: str


def _missing(name: str) -> NotFound:
    return NotFound(f"the document holds no image named {name!r}", code="share_media_not_found")


def _read(path: Path, name: str) -> bytes | None:
    try:
        with zipfile.ZipFile(path) as package:
            info = package.getinfo(f"word/media/{name}")
            if info.file_size > MAX_BYTES:
                return None
            return package.read(info)
    except (KeyError, FileNotFoundError, zipfile.BadZipFile):
        return None


async def image(doc: Document, name: str, shown: Collection[str]) -> Image:
    """The image `name` of the document's uploaded DOCX, if the document's text shows it (`shown`: the names
    of its `media/NAME` references); 404 otherwise."""
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if doc.kind != "docx" or not _NAME.match(name) or ".." in name or ext not in MEDIA_TYPES:
        raise _missing(name[:100])
    if name not in shown:
        raise _missing(name[:100])
    try:
        path = blobs.path_of(get_settings().blob_dir, doc.blob_path)
    except ValueError:
        raise _missing(name) from None
    data = await asyncio.to_thread(_read, path, name)
    if data is None:
        raise _missing(name)
    return Image(data, MEDIA_TYPES[ext])
