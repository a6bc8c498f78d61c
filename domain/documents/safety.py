"""Limits checked before a parser sees an upload: zip bombs and oversized archives."""

from __future__ import annotations

import zipfile

from domain.documents.errors import ConversionError

MAX_MEMBERS = 5_000
MAX_UNCOMPRESSED = 200 * 1024 * 1024  # whole archive, expanded
MAX_MEMBER = 100 * 1024 * 1024
MAX_RATIO = 200  # expanded / compressed, for members large enough to matter


def check_zip(zf: zipfile.ZipFile) -> None:
    """Reject an archive whose declared sizes or compression ratio betray a zip bomb."""
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise ConversionError(f"zip bomb suspected: {len(infos)} archive members", code="zip_bomb")
    total = 0
    for info in infos:
        if info.flag_bits & 0x1:
            raise ConversionError("the document is encrypted", code="encrypted")
        total += info.file_size
        if info.file_size > MAX_MEMBER:
            raise ConversionError(
                f"zip bomb suspected: member {info.filename} expands to {info.file_size} bytes",
                code="zip_bomb",
            )
        if info.file_size > 1_000_000 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            ratio = info.file_size // max(info.compress_size, 1)
            raise ConversionError(
                f"zip bomb suspected: member {info.filename} compresses {ratio}:1",
                code="zip_bomb",
            )
    if total > MAX_UNCOMPRESSED:
        raise ConversionError(f"zip bomb suspected: archive expands to {total} bytes", code="zip_bomb")


def read_member(zf: zipfile.ZipFile, name: str) -> bytes:
    """A member's bytes, never more than its declared size (a lying header cannot inflate it)."""
    info = zf.getinfo(name)
    with zf.open(info) as fh:
        data = fh.read(info.file_size + 1)
    if len(data) > info.file_size:
        raise ConversionError(f"zip bomb suspected: {name} is larger than declared", code="zip_bomb")
    return data
