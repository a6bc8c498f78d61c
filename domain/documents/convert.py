"""Conversion of an upload to Markdown by its detected kind."""

from __future__ import annotations

from domain.documents import convert_docx, convert_html, convert_pdf
from domain.documents.detect import decode


def to_markdown(kind: str, data: bytes) -> str:
    if kind == "docx":
        return convert_docx.convert(data)
    if kind == "pdf":
        return convert_pdf.convert(data)
    if kind == "html":
        return convert_html.convert(data)
    # Markdown and plain text are kept as they are (line endings normalised).
    text = decode(data).replace("\r\n", "\n").replace("\r", "\n")
    return text if text.endswith("\n") or not text else text + "\n"
