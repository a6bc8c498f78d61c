"""Documents the tests build for themselves, so that conversion is tested without ../shared/fixtures:
a DOCX (python-docx) with headings, a hyperlink, a footnote, bullet and numbered lists, a table and an
inline image, and a PDF (fpdf2) with headings in a larger bold font, a list and a table.

python-docx has no API for footnotes: `_add_footnote` writes the footnotes part (word/footnotes.xml, with
the separator notes Word expects) into the package, relates it to the document part and puts a
footnoteReference run in the paragraph.

`python -m tests.built_documents FILE.docx|FILE.pdf ...` writes them (docs/examples/budget.docx, which
README's upload example uses, was written so).
"""

from __future__ import annotations

import io
import struct
import sys
import zlib
from pathlib import Path

import docx
from docx.document import Document as WordDocument
from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import Part
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Inches
from docx.text.paragraph import Paragraph
from fpdf import FPDF

LINK = "https://example.com/finance-policy"
FOOTNOTE = "Audited by the finance committee."
BULLETS = ["Staff wages", "Building repairs"]
STEPS = ["Approve the budget", "Publish the report"]
COSTS = [("Item", "Cost"), ("Rent", "1200"), ("Staff", "5400")]
IMAGE_ALT = "Site plan"

PDF_ROWS = [("Quarter", "Revenue", "Costs"), ("Q1", "1200", "800"), ("Q2", "1500", "900")]
PDF_BULLETS = ["Membership grew", "Two new sites opened"]

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def png(width: int = 4, height: int = 3, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A small solid-colour PNG, written by hand (no imaging library needed)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    rows = b"".join(b"\0" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def _add_hyperlink(paragraph: Paragraph, text: str, url: str) -> None:
    r_id = paragraph.part.relate_to(url, RT.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), r_id)
    run = OxmlElement("w:r")
    t = OxmlElement("w:t")
    t.text = text
    run.append(t)
    link.append(run)
    paragraph._p.append(link)  # type: ignore[arg-type]  # types-lxml types children by the parent's class; OOXML mixes them


def _add_footnote(word: WordDocument, paragraph: Paragraph, text: str) -> None:
    notes = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:footnotes xmlns:w="{_W}">'
        '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
        '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/>'
        "</w:r></w:p></w:footnote>"
        '<w:footnote w:id="1"><w:p><w:r><w:rPr><w:vertAlign w:val="superscript"/></w:rPr><w:footnoteRef/>'
        f'</w:r><w:r><w:t xml:space="preserve"> {text}</w:t></w:r></w:p></w:footnote></w:footnotes>'
    )
    part = Part(PackURI("/word/footnotes.xml"), CT.WML_FOOTNOTES, notes.encode(), word.part.package)
    word.part.relate_to(part, RT.FOOTNOTES)
    run = OxmlElement("w:r")
    props = OxmlElement("w:rPr")
    align = OxmlElement("w:vertAlign")
    align.set(qn("w:val"), "superscript")
    props.append(align)
    run.append(props)
    ref = OxmlElement("w:footnoteReference")
    ref.set(qn("w:id"), "1")
    run.append(ref)
    paragraph._p.append(run)  # type: ignore[arg-type]  # types-lxml types children by the parent's class; OOXML mixes them


def docx_bytes() -> bytes:
    """Budget summary (h1) › Priorities, Costs, Site plan (h2): a link, a footnote, lists, a table and an
    image."""
    word = docx.Document()
    word.add_heading("Budget summary", level=1)
    para = word.add_paragraph("Figures follow the ")
    _add_hyperlink(para, "finance policy", LINK)
    para.add_run(" of the board.")
    _add_footnote(word, para, FOOTNOTE)
    word.add_heading("Priorities", level=2)
    for item in BULLETS:
        word.add_paragraph(item, style="List Bullet")
    for item in STEPS:
        word.add_paragraph(item, style="List Number")
    word.add_heading("Costs", level=2)
    table = word.add_table(rows=len(COSTS), cols=2)
    table.style = "Table Grid"
    for row, values in zip(table.rows, COSTS, strict=True):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    word.add_heading("Site plan", level=2)
    word.add_paragraph().add_run().add_picture(io.BytesIO(png()), width=Inches(1))
    word.inline_shapes[0]._inline.docPr.set("descr", IMAGE_ALT)
    out = io.BytesIO()
    word.save(out)
    return out.getvalue()


def pdf_bytes() -> bytes:
    """Annual report (20 pt bold) › Members, Finances (15 pt bold): body text, a list and a table."""
    pdf = FPDF()
    pdf.add_page()

    def heading(text: str, size: int) -> None:
        pdf.set_font("Helvetica", "B", size)
        pdf.cell(0, size * 0.6, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(3)

    def body(text: str) -> None:
        pdf.set_font("Helvetica", "", 11)
        pdf.multi_cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(3)

    heading("Annual report", 20)
    body("This report covers the year to June. It is written for members and for the board.")
    heading("Members", 15)
    body("The association welcomed new members in every state this year.")
    for item in PDF_BULLETS:
        body(f"- {item}")
    heading("Finances", 15)
    body("Revenue and costs by quarter:")
    pdf.set_font("Helvetica", "", 11)
    with pdf.table(col_widths=(40, 40, 40), width=120, align="LEFT") as table:
        for values in PDF_ROWS:
            row = table.row()
            for value in values:
                row.cell(value)
    pdf.ln(4)
    body("Both quarters closed with a surplus.")
    return bytes(pdf.output())


def main(argv: list[str]) -> int:
    builders = {".docx": docx_bytes, ".pdf": pdf_bytes}
    for name in argv:
        path = Path(name)
        if path.suffix not in builders:
            print(f"{name}: give a .docx or .pdf name", file=sys.stderr)
            return 2
        path.write_bytes(builders[path.suffix]())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
