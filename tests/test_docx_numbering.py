"""The DOCX conversion keeps Word's automatic heading numbering as text (issue 34): a heading numbered by a
multilevel list, through its style or directly, reads `## 1.1 Scope`, counted as Word counts (levels
reset below, a restart override honoured, bullets and unnumbered headings left alone)."""

from __future__ import annotations

import io
import zipfile

import docx
from docx.oxml import OxmlElement
from docx.oxml.ns import qn

from domain.documents import convert_docx

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
NUMBERING = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:numbering {W}>
  <w:abstractNum w:abstractNumId="7">
    <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1"/></w:lvl>
    <w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1.%2"/></w:lvl>
    <w:lvl w:ilvl="2"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/><w:lvlText w:val="(%3)"/></w:lvl>
  </w:abstractNum>
  <w:abstractNum w:abstractNumId="8">
    <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="upperRoman"/><w:lvlText w:val="Part %1"/></w:lvl>
  </w:abstractNum>
  <w:abstractNum w:abstractNumId="9">
    <w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val="*"/></w:lvl>
  </w:abstractNum>
  <w:num w:numId="3"><w:abstractNumId w:val="7"/></w:num>
  <w:num w:numId="4"><w:abstractNumId w:val="8"/></w:num>
  <w:num w:numId="5"><w:abstractNumId w:val="9"/></w:num>
  <w:num w:numId="6"><w:abstractNumId w:val="8"/>
    <w:lvlOverride w:ilvl="0"><w:startOverride w:val="1"/></w:lvlOverride></w:num>
</w:numbering>"""


def _num(paragraph, num_id: str, ilvl: int | None = None) -> None:
    ppr = paragraph._p.get_or_add_pPr()
    num_pr = OxmlElement("w:numPr")
    if ilvl is not None:
        lvl = OxmlElement("w:ilvl")
        lvl.set(qn("w:val"), str(ilvl))
        num_pr.append(lvl)
    nid = OxmlElement("w:numId")
    nid.set(qn("w:val"), num_id)
    num_pr.append(nid)
    ppr.append(num_pr)


def _style_numbered(document, style_name: str, num_id: str, ilvl: int) -> None:
    _num_style = document.styles[style_name].element.get_or_add_pPr()
    num_pr = OxmlElement("w:numPr")
    lvl = OxmlElement("w:ilvl")
    lvl.set(qn("w:val"), str(ilvl))
    nid = OxmlElement("w:numId")
    nid.set(qn("w:val"), num_id)
    num_pr.append(lvl)
    num_pr.append(nid)
    _num_style.append(num_pr)


def _docx() -> bytes:
    document = docx.Document()
    _style_numbered(document, "Heading 1", "3", 0)
    _style_numbered(document, "Heading 2", "3", 1)
    document.add_heading("Introduction", level=1)  # 1
    document.add_heading("Scope", level=2)  # 1.1
    document.add_heading("Terms", level=2)  # 1.2
    p = document.add_paragraph("A point", style="Heading 3")
    _num(p, "3", 2)  # (a), directly numbered
    document.add_paragraph("a bullet in the body")
    _num(document.paragraphs[-1], "5", 0)
    document.add_heading("Duties", level=1)  # 2
    document.add_heading("Keeping", level=2)  # 2.1 (level 1 was reset)
    part = document.add_heading("Widgets", level=1)
    _num(part, "4", 0)  # Part I: direct numbering beats the style's
    part = document.add_heading("Gadgets", level=1)
    _num(part, "4", 0)  # Part II
    part = document.add_heading("Annex", level=1)
    _num(part, "6", 0)  # restarted: Part I
    part = document.add_heading("Unnumbered", level=1)
    _num(part, "0", 0)  # numId 0: numbering switched off
    out = io.BytesIO()
    document.save(out)
    src = zipfile.ZipFile(io.BytesIO(out.getvalue()))
    fixed = io.BytesIO()
    with zipfile.ZipFile(fixed, "w") as dst:
        for info in src.infolist():
            data = NUMBERING.encode() if info.filename == "word/numbering.xml" else src.read(info.filename)
            dst.writestr(info.filename, data)
    return fixed.getvalue()


def test_headings_keep_their_automatic_numbers_as_text():
    md = convert_docx.convert(_docx())
    headings = [line for line in md.splitlines() if line.startswith("#")]
    assert headings == [
        "# 1 Introduction",
        "## 1.1 Scope",
        "## 1.2 Terms",
        "### (a) A point",
        "# 2 Duties",
        "## 2.1 Keeping",
        "# Part I Widgets",
        "# Part II Gadgets",
        "# Part I Annex",
        "# Unnumbered",
    ]
    assert "a bullet in the body" in md
    assert "* a bullet" not in md.replace("- a bullet", "")


def test_a_docx_without_numbering_is_unchanged():
    document = docx.Document()
    document.add_heading("Plain", level=1)
    out = io.BytesIO()
    document.save(out)
    assert convert_docx.convert(out.getvalue()).startswith("# Plain")
