"""What an upload really is, from its bytes (magic numbers, zip structure, text sniffing); the file
name only breaks the tie between Markdown and plain text."""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

MEDIA_TYPES = {
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pdf": "application/pdf",
    "html": "text/html",
    "markdown": "text/markdown",
    "text": "text/plain",
}
_BINARY_MAGIC = [
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"Rar!", "a RAR archive"),
    (b"7z\xbc\xaf", "a 7-Zip archive"),
    (b"\x7fELF", "an executable"),
    (b"MZ", "a Windows executable"),
    (b"{\\rtf", "an RTF document"),
]
_HTML = re.compile(rb"^\s*(<!--.*?-->\s*)*(<!doctype\s+html|<html|<head|<body)", re.I | re.S)
_HTML_TAGS = re.compile(rb"<(p|div|h[1-6]|table|ul|ol|article|section)\b[^>]*>", re.I)
_MD_HINT = re.compile(r"^(#{1,6} \S|[-*] \S|\d+\. \S|```|\|.*\|)", re.M)


class Unsupported(Exception):
    """The upload is not a type we convert; `status` is 415 (wrong type) or 422 (unusable content)."""

    def __init__(self, reason: str, status: int = 415) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


@dataclass(frozen=True)
class Detected:
    kind: str

    @property
    def media_type(self) -> str:
        return MEDIA_TYPES[self.kind]


def detect(path: Path, filename: str | None) -> Detected:
    with path.open("rb") as fh:
        head = fh.read(8192)
    if not head:
        raise Unsupported("the file is empty", status=422)
    suffix = Path(filename or "").suffix.lower()
    if head.startswith(b"%PDF-") or b"%PDF-" in head[:1024]:
        return Detected("pdf")
    if head.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(path) as zf:
                names = set(zf.namelist())
        except (zipfile.BadZipFile, OSError):
            raise Unsupported("the file looks like a zip archive but is corrupt", status=422) from None
        if "word/document.xml" in names and "[Content_Types].xml" in names:
            return Detected("docx")
        if "xl/workbook.xml" in names or "ppt/presentation.xml" in names:
            raise Unsupported(
                "spreadsheets and presentations are not supported; upload DOCX, PDF, HTML, Markdown or text"
            )
        raise Unsupported("a zip archive that is not a Word (DOCX) document")
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        raise Unsupported(
            "a legacy binary Office file (.doc) or a password-protected Office document; "
            "save it as .docx without a password"
        )
    for magic, what in _BINARY_MAGIC:
        if head.startswith(magic):
            raise Unsupported(f"the file is {what}; upload DOCX, PDF, HTML, Markdown or text")
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise Unsupported("the file is binary data of an unsupported type")
    if _HTML.match(head.lstrip(b"\xef\xbb\xbf")) or (suffix in (".html", ".htm") and _HTML_TAGS.search(head)):
        return Detected("html")
    text = decode(head, partial=True)
    if suffix in (".md", ".markdown", ".mdown") or (
        suffix not in (".txt", ".text") and _MD_HINT.search(text)
    ):
        return Detected("markdown")
    return Detected("text")


def decode(data: bytes, *, partial: bool = False) -> str:
    """Text bytes as str: UTF-8 (with or without BOM), UTF-16 with BOM, else Latin-1 never fails."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if partial and exc.start >= len(data) - 4:
            return data[: exc.start].decode("utf-8")
        return data.decode("cp1252", errors="replace")
