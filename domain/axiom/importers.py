"""Importers: an instrument from a register's file (DOCX through the project's DOCX conversion, EPUB/XHTML,
PDF) or many from a corpus JSONL file (the Open Australian Legal Corpus shape: `version_id, type,
jurisdiction, source, citation, url, text`), each turned into an `InstrumentIn` whose sections come from
domain/axiom/numbering.py and whose provenance names the register, file, compilation date, licence and the
attribution the licence asks for.

The JSONL reader streams: one line at a time (a line longer than MAX_LINE is refused, not read whole), so
memory stays bounded by the batch being written, and it reports the byte offset after each record so an
import can resume where a checkpoint says it stopped."""

from __future__ import annotations

import io
import json
import posixpath
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from lxml import etree, html
from pydantic import ValidationError

from domain.axiom import legislation, numbering
from domain.axiom.provenance import CC_BY, Register, attribution, register_for
from domain.documents.errors import ConversionError
from domain.documents.safety import check_zip, read_member
from domain.kernel.errors import BadRequest

MAX_LINE = 64 * 1024 * 1024  # one JSONL record (a long Act's text is tens of MB at most)
_TITLE = re.compile(
    r"^(?P<t>[A-Z][\w ,'’()\-–&/.]*?"
    r"\b(?:Act|Regulations?|Rules|Ordinance|Order|Determination|Instrument|By-laws?)"
    r"(?: \([^)]*\))? (?P<y>1[89]\d\d|2[01]\d\d)(?: \(No\.? \d+\))?)(?: \((?P<j>[A-Za-z]{2,4})\))?$"
)
_CORPUS_JURISDICTION = {
    "commonwealth": "AU",
    "new_south_wales": "AU-NSW",
    "queensland": "AU-QLD",
    "western_australia": "AU-WA",
    "south_australia": "AU-SA",
    "tasmania": "AU-TAS",
    "norfolk_island": "AU",  # Norfolk Island's continued laws are on the Federal Register
    "victoria": "AU-VIC",
    "australian_capital_territory": "AU-ACT",
    "northern_territory": "AU-NT",
}
_CORPUS_TYPE = {"primary_legislation": "act", "secondary_legislation": "regulation"}
_REGISTER_JURISDICTION = {
    Register.FRL: "AU",
    Register.NSW: "AU-NSW",
    Register.QLD: "AU-QLD",
    Register.WA: "AU-WA",
    Register.SA: "AU-SA",
    Register.TAS: "AU-TAS",
}


class FileKind(StrEnum):
    """The formats an instrument file is imported from."""

    DOCX = "docx"
    EPUB = "epub"
    XHTML = "xhtml"
    PDF = "pdf"
    JSONL = "jsonl"


@dataclass(frozen=True)
class FileFacts:
    """What an operator says about a register file (what the file itself may not say)."""

    register: Register = Register.OTHER
    jurisdiction: str | None = None
    title: str | None = None
    version_date: date | None = None
    source: str | None = None  # the URL the file was downloaded from, else its name
    licence: str | None = CC_BY
    repealed: bool = False


def kind_of(name: str, head: bytes) -> FileKind | None:
    """The file's kind from its content (and, between the zip formats and the text ones, its name)."""
    lower = name.casefold()
    if head.startswith(b"%PDF-"):
        return FileKind.PDF
    if head.startswith(b"PK\x03\x04"):
        if lower.endswith(".epub") or b"application/epub+zip" in head[:100]:
            return FileKind.EPUB
        return FileKind.DOCX if lower.endswith((".docx", ".docm")) or b"word/" in head[:2000] else None
    if lower.endswith((".jsonl", ".ndjson")):
        return FileKind.JSONL
    stripped = head.lstrip()
    if lower.endswith((".xhtml", ".html", ".htm")) or stripped.startswith((b"<?xml", b"<!DOCTYPE", b"<html")):
        return FileKind.XHTML
    return None


# ---------------------------------------------------------------------------------------- one instrument


def instrument(
    lines: list[str],
    *,
    facts: FileFacts,
    title: str | None = None,
    jurisdiction: str | None = None,
    type_: str | None = None,
    register_id: str | None = None,
    url: str | None = None,
) -> legislation.InstrumentIn:
    """An instrument from its text: the title from the facts, else the first line that reads as one."""
    found = title or facts.title
    year: int | None = None
    written_jurisdiction: str | None = None
    for line in lines[:200]:
        m = _TITLE.match(numbering.clean(line))
        if m:
            found = found or m["t"]
            written_jurisdiction = m["j"]
            break
    if not found:
        raise BadRequest(
            "no title: the text has no line like 'Work Health and Safety Act 2011'; give the title",
            code="no_title",
        )
    m = _TITLE.match(found)
    if m:
        year = int(m["y"])
    code = jurisdiction or facts.jurisdiction or _REGISTER_JURISDICTION.get(facts.register)
    if code is None and written_jurisdiction:
        code = written_jurisdiction
    if code is None:
        raise BadRequest(
            f"no jurisdiction for {found!r}: give it (AU, AU-NSW …) or the register", code="no_jurisdiction"
        )
    kind = type_ or ("regulation" if re.search(r"\b(regulations?|rules)\b", found, re.I) else "act")
    units = numbering.parse(lines, kind=numbering.kind_for(kind, found))
    data: dict[str, Any] = {
        "jurisdiction": code,
        "type": kind,
        "title": found,
        "year": year,
        "registerId": register_id,
        "url": url or (facts.source if facts.source and facts.source.startswith("http") else None),
        "provenance": {
            "sourceRegister": facts.register.value,
            "source": facts.source,
            "versionDate": facts.version_date.isoformat() if facts.version_date else None,
            "licence": facts.licence,
            "attribution": attribution(facts.register, facts.version_date),
        },
        "sections": [
            {
                "sectionId": u.section_id,
                "title": u.title,
                "content": u.content[:200_000] if u.content else None,
                "depth": min(u.depth, 10),
                "parentId": u.parent_id,
                "notes": u.note_text[:10_000] if u.note_text else None,
            }
            for u in units
        ],
    }
    if facts.repealed:
        data["status"] = "repealed"
    return legislation.parse_documents(data)[0]


def _docx_lines(data: bytes | Path) -> list[str]:
    # Deferred: python-docx and BeautifulSoup are a start-up cost of every process that imports this module.
    from domain.documents import convert_docx

    return convert_docx.convert(data).split("\n")


def _pdf_lines(data: bytes | Path) -> list[str]:
    # Deferred: pypdf (~0.13 s of CPU) is a start-up cost of every process that imports this module.
    from domain.documents import convert_pdf

    return convert_pdf.convert(data).split("\n")


_BLOCKS = {"p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "tr", "blockquote", "pre", "dt", "dd"}


def xhtml_lines(data: bytes) -> list[str]:
    """The text of an XHTML (or HTML) page, a line per block element, scripts and styles left out."""
    try:
        root = html.fromstring(data)
    except (etree.ParserError, ValueError) as exc:
        raise ConversionError(f"not XHTML: {exc}") from None
    for bad in root.xpath("//script|//style|//head"):
        bad.getparent().remove(bad)
    out: list[str] = []
    current: list[str] = []

    def flush() -> None:
        text = " ".join("".join(current).split())
        if text:
            out.append(text)
        current.clear()

    def walk(el: Any) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""
        tag = tag.rsplit("}", 1)[-1].lower()
        if tag in _BLOCKS:
            flush()
        if tag == "br":
            flush()
        if el.text and tag not in ("script", "style"):
            current.append(el.text)
        for child in el:
            walk(child)
        if tag in _BLOCKS:
            flush()
        if el.tail:
            current.append(el.tail)

    walk(root)
    flush()
    return out


def epub_lines(data: bytes | Path) -> list[str]:
    """An EPUB's XHTML documents in spine order (container.xml → the OPF package → its spine)."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data) if isinstance(data, bytes) else data)
    except zipfile.BadZipFile:
        raise ConversionError("not an EPUB: not a zip file") from None
    with zf:
        check_zip(zf)
        names = set(zf.namelist())
        if "META-INF/container.xml" not in names:
            raise ConversionError("not an EPUB: META-INF/container.xml is missing")
        parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
        container = etree.fromstring(read_member(zf, "META-INF/container.xml"), parser)
        rootfiles = [el.get("full-path") for el in container.iter() if str(el.tag).endswith("rootfile")]
        opf_name = next((r for r in rootfiles if r in names), None)
        if opf_name is None:
            raise ConversionError("not an EPUB: its container names no package document in the file")
        opf = etree.fromstring(read_member(zf, opf_name), parser)
        base = posixpath.dirname(opf_name)
        manifest = {
            el.get("id"): posixpath.normpath(posixpath.join(base, el.get("href") or ""))
            for el in opf.iter()
            if str(el.tag).endswith("}item")
        }
        spine = [el.get("idref") for el in opf.iter() if str(el.tag).endswith("}itemref")]
        lines: list[str] = []
        for idref in spine:
            member = manifest.get(idref)
            if member and member in names:
                lines += xhtml_lines(read_member(zf, member))
        return lines


def from_file(name: str, data: bytes | Path, facts: FileFacts) -> legislation.InstrumentIn:
    """One instrument from a register's DOCX, EPUB, XHTML or PDF file (415 for another kind, 422 when the
    file cannot be read as its kind or holds no instrument)."""
    head = data[:4096] if isinstance(data, bytes) else _head(data)
    kind = kind_of(name, head)
    facts = facts if facts.source else replace(facts, source=Path(name).name)
    try:
        if kind is FileKind.DOCX:
            lines = _docx_lines(data)
        elif kind is FileKind.EPUB:
            lines = epub_lines(data)
        elif kind is FileKind.XHTML:
            lines = xhtml_lines(data if isinstance(data, bytes) else data.read_bytes())
        elif kind is FileKind.PDF:
            lines = _pdf_lines(data)
        else:
            raise UnsupportedFile(
                f"{name}: not a DOCX, EPUB, XHTML or PDF file (a corpus is imported as .jsonl)",
            )
    except ConversionError as exc:
        raise UnreadableFile(f"{name}: {exc}") from None
    if not any(line.strip() for line in lines):
        raise UnreadableFile(f"{name}: the file has no text")
    try:
        return instrument(lines, facts=facts)
    except BadRequest as exc:
        raise UnreadableFile(f"{name}: {exc.detail}", code=exc.code) from None


def kind_of_path(path: Path, name: str | None = None) -> FileKind | None:
    """A file's kind, by its content and `name` (default: the path's); a BadRequest when there is none."""
    if not path.is_file():
        raise BadRequest(f"{path}: no such file", code="no_file")
    return kind_of(name or path.name, _head(path))


def _head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(4096)


class UnsupportedFile(BadRequest):
    status = 415
    code = "unsupported_file"


class UnreadableFile(BadRequest):
    status = 422
    code = "unreadable_file"


# -------------------------------------------------------------------------------------------- corpus


@dataclass(frozen=True)
class CorpusRecord:
    """One JSONL line: the byte offset after it, and the instrument it holds or why it was skipped."""

    line_number: int
    end_offset: int
    instrument: legislation.InstrumentIn | None
    skipped: str | None = None


def _corpus_instrument(record: dict[str, Any], facts: FileFacts) -> legislation.InstrumentIn | str:
    kind = _CORPUS_TYPE.get(str(record.get("type", "")))
    if kind is None:
        return f"type {record.get('type')!r} is not legislation"
    jurisdiction = _CORPUS_JURISDICTION.get(str(record.get("jurisdiction", "")))
    if jurisdiction is None:
        return f"jurisdiction {record.get('jurisdiction')!r} is not known"
    citation = str(record.get("citation") or "").strip()
    text = record.get("text")
    if not citation or not isinstance(text, str):
        return "citation or text is missing"
    title = re.sub(r"\s*\([A-Za-z ]{2,30}\)$", "", citation).strip()
    register = register_for(str(record.get("source") or "")) if record.get("source") else facts.register
    version: date | None = None
    raw_date = record.get("date")
    if isinstance(raw_date, str):
        try:
            version = date.fromisoformat(raw_date[:10])
        except ValueError:
            version = None
    one = FileFacts(
        register=register,
        jurisdiction=jurisdiction,
        title=title,
        version_date=version or facts.version_date,
        source=str(record.get("url") or facts.source or ""),
        licence=facts.licence,
    )
    version_id = str(record.get("version_id") or "")
    register_id = version_id[:60] if re.match(r"^[A-Z]\d{4}[A-Z]\d{5,6}", version_id) else None
    try:
        return instrument(
            text.split("\n"),
            facts=one,
            title=title,
            jurisdiction=jurisdiction,
            type_=kind,
            register_id=register_id,
            url=str(record.get("url")) if record.get("url") else None,
        )
    except BadRequest as exc:
        return exc.detail


def read_corpus(stream: IO[bytes], facts: FileFacts, *, start: int = 0) -> Iterator[CorpusRecord]:
    """The records of a corpus JSONL from byte offset `start` (a line boundary), one at a time."""
    stream.seek(start)
    offset = start
    number = 0
    while True:
        line = stream.readline(MAX_LINE + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            raise UnreadableFile(f"line {number} (byte {offset}) is longer than {MAX_LINE} bytes")
        offset += len(line)
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            yield CorpusRecord(number, offset, None, f"not JSON: {exc}")
            continue
        if not isinstance(record, dict):
            yield CorpusRecord(number, offset, None, "not a JSON object")
            continue
        try:
            made = _corpus_instrument(record, facts)
        except ValidationError as exc:  # pragma: no cover - parse_documents raises BadRequest
            made = str(exc)
        if isinstance(made, str):
            yield CorpusRecord(number, offset, None, made)
        else:
            yield CorpusRecord(number, offset, made)
