"""Synthetic legislation files for the import tests, in each format an operator imports: a DOCX with the
paragraph styles registers use (ActHead2 for parts, ActHead3 for divisions, ActHead5 for sections, with
outline levels), an EPUB (container, package, XHTML chapter) and a corpus JSONL. Every instrument and every
word of text is invented here; none is statutory text."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import docx
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn


def act_lines(title: str, duty_text: str = "must keep every widget dry") -> list[str]:
    """An invented Act's text, in the numbering registers use."""
    return [
        title,
        "Part 1—Preliminary",
        "1\tShort title",
        f"This Act is the {title}.",
        "2\tDefinitions",
        "In this Act:",
        "widget means a small invented device.",
        "Note: The word gadget is not defined.",
        "Part 2—Duties",
        "Division 1—Widget keepers",
        "180\tDuty of widget keepers",
        f"(1) A widget keeper {duty_text}.",
        "(2) The keeper must also:",
        "(a) label each widget; and",
        "(b) count the widgets weekly, including:",
        "(i) broken widgets; and",
        "(ii) borrowed widgets; and",
        "(c) report the count to the registrar.",
        "Note 1: Penalties are set by section 181.",
        "180A\tExemptions",
        "A keeper of fewer than three widgets is exempt.",
        "Schedule 1—Forms",
        "1\tForm of widget report",
        "The report names the keeper and the count.",
    ]


def _style(document: docx.document.Document, name: str, outline: int | None) -> None:
    style = document.styles.add_style(name, WD_STYLE_TYPE.PARAGRAPH)
    if outline is not None:
        ppr = style.element.get_or_add_pPr()
        level = OxmlElement("w:outlineLvl")
        level.set(qn("w:val"), str(outline))
        ppr.append(level)


def act_docx(title: str, duty_text: str = "must keep every widget dry") -> bytes:
    document = docx.Document()
    for name, outline in (
        ("ShortT", 0),
        ("ActHead2", 1),
        ("ActHead3", 2),
        ("ActHead5", 3),
        ("subsection", None),
    ):
        _style(document, name, outline)
    for line in act_lines(title, duty_text):
        if line == title:
            style = "ShortT"
        elif line.startswith(("Part ", "Schedule ")):
            style = "ActHead2"
        elif line.startswith("Division "):
            style = "ActHead3"
        elif line[0].isdigit():
            style = "ActHead5"
        else:
            style = "subsection"
        document.add_paragraph(line, style=style)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def act_epub(title: str, duty_text: str = "must keep every widget dry") -> bytes:
    body = "".join(
        f"<h2>{line}</h2>" if line.startswith(("Part ", "Division ", "Schedule ")) else f"<p>{line}</p>"
        for line in act_lines(title, duty_text)
    )
    chapter = (
        '<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head>'
        f"<title>{title}</title><style>p {{}}</style></head><body>{body}</body></html>"
    )
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        f'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title></metadata>'
        '<manifest><item id="c1" href="text/act.xhtml" media-type="application/xhtml+xml"/></manifest>'
        '<spine><itemref idref="c1"/></spine></package>'
    )
    container = (
        '<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        'version="1.0"><rootfiles><rootfile full-path="OEBPS/content.opf" '
        'media-type="application/oebps-package+xml"/></rootfiles></container>'
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        zf.writestr("META-INF/container.xml", container)
        zf.writestr("OEBPS/content.opf", opf)
        zf.writestr("OEBPS/text/act.xhtml", chapter)
    return out.getvalue()


def act_pdf(title: str) -> bytes:
    """The invented Act as a PDF (fpdf2): headings bold and larger, the rest body text. Helvetica has no
    em dash, so parts read `Part 1 - Preliminary`, as some registers' PDFs do."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    for line in act_lines(title):
        text = line.replace("\u2014", " - ").replace("\t", "  ")
        heading = line.startswith(("Part ", "Division ", "Schedule ")) or line[0].isdigit() or line == title
        pdf.set_font("Helvetica", "B" if heading else "", 13 if heading else 11)
        pdf.multi_cell(0, 7, text, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def corpus_record(
    n: int, *, jurisdiction: str = "new_south_wales", kind: str = "primary_legislation"
) -> dict[str, str]:
    title = (
        f"Synthetic Widget Number {n} Act 2031"
        if kind == "primary_legislation"
        else f"Synthetic Widget {n} Regulation 2031"
    )
    lines = [
        title,
        "1\tShort title",
        f"This is the {title}.",
        "180\tDuty",
        f"(1) A keeper must keep widget {n} dry.",
    ]
    return {
        "version_id": f"synthetic-{n}",
        "type": kind,
        "jurisdiction": jurisdiction,
        "source": "nsw_legislation",
        "citation": f"{title} (NSW)",
        "url": f"https://legislation.example/{n}",
        "text": "\n".join(lines),
    }


def write_corpus(path: Path, count: int, *, extra: list[str] | None = None) -> Path:
    """A corpus JSONL of `count` synthetic instruments (every tenth a regulation), plus `extra` raw lines."""
    with path.open("w", encoding="utf-8") as out:
        for n in range(count):
            kind = "secondary_legislation" if n % 10 == 9 else "primary_legislation"
            out.write(json.dumps(corpus_record(n, kind=kind)) + "\n")
        for line in extra or []:
            out.write(line + "\n")
    return path
