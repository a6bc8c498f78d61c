"""Conversion of an upload to Markdown by its detected kind.

`file_to_markdown` reads the upload from its file where the format allows (a DOCX's members and a PDF's
objects are read from the file as they are needed); HTML, Markdown and text are read whole, since the
whole text is what they become. domain/documents/sandbox.py runs it in a child process with limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from domain.documents import convert_docx, convert_html, convert_pdf
from domain.documents.detect import decode


def to_markdown(kind: str, data: bytes) -> str:
    if kind == "docx":
        return convert_docx.convert(data)
    if kind == "pdf":
        return convert_pdf.convert(data)
    if kind == "html":
        return convert_html.convert(data)
    return _text(data)


def file_to_markdown(kind: str, path: Path) -> str:
    if kind == "docx":
        return convert_docx.convert(path)
    if kind == "pdf":
        return convert_pdf.convert(path)
    return to_markdown(kind, path.read_bytes())


def file_to_result(kind: str, path: Path) -> tuple[str, dict[str, Any] | None]:
    """The Markdown and, for a DOCX, its source map (which original blocks each section came from).

    A NUL (a text's, a PDF's text layer's) becomes U+FFFD, as CommonMark reads it: PostgreSQL text cannot
    hold one. Other control characters stay (the user's text); writers map them (xmltext.py)."""
    if kind == "docx":
        markdown, source_map = convert_docx.convert_with_map(path)
    else:
        markdown, source_map = file_to_markdown(kind, path), None
    return markdown.replace("\x00", "\ufffd"), source_map


def _text(data: bytes) -> str:
    # Markdown and plain text are kept as they are (line endings normalised).
    text = decode(data).replace("\r\n", "\n").replace("\r", "\n")
    return text if text.endswith("\n") or not text else text + "\n"
