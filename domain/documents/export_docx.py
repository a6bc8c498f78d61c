"""Markdown → DOCX with python-docx, for download: headings, paragraphs with bold, italic, code and
links, nested bullet and numbered lists, tables, code blocks and quotes."""

from __future__ import annotations

import io
from typing import Any

from docx import Document as new_docx
from docx.enum.text import WD_COLOR_INDEX
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Pt, RGBColor
from docx.text.paragraph import Paragraph
from markdown_it import MarkdownIt

_md = MarkdownIt("commonmark").enable("table").enable("strikethrough")


def _add_hyperlink(paragraph: Paragraph, url: str, text: str, fmt: dict[str, bool]) -> None:
    rel_id = paragraph.part.relate_to(url, RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), rel_id)
    run = OxmlElement("w:r")
    props = OxmlElement("w:rPr")
    style = OxmlElement("w:rStyle")
    style.set(qn("w:val"), "Hyperlink")
    props.append(style)
    color = OxmlElement("w:color")
    color.set(qn("w:val"), "0563C1")
    props.append(color)
    underline = OxmlElement("w:u")
    underline.set(qn("w:val"), "single")
    props.append(underline)
    for flag, tag in (("bold", "w:b"), ("italic", "w:i")):
        if fmt.get(flag):
            props.append(OxmlElement(tag))
    run.append(props)
    t = OxmlElement("w:t")
    t.text = text
    t.set(qn("xml:space"), "preserve")
    run.append(t)
    link.append(run)
    # types-lxml wants a child of the parent's own class; lxml (and python-docx's CT_P) take any element.
    paragraph._p.append(link)  # type: ignore[arg-type]


def _inline(paragraph: Paragraph, token: Any) -> None:
    fmt = {"bold": False, "italic": False, "strike": False}
    link: str | None = None
    link_text: list[str] = []
    for child in token.children or []:
        kind = child.type
        if kind == "strong_open":
            fmt["bold"] = True
        elif kind == "strong_close":
            fmt["bold"] = False
        elif kind == "em_open":
            fmt["italic"] = True
        elif kind == "em_close":
            fmt["italic"] = False
        elif kind == "s_open":
            fmt["strike"] = True
        elif kind == "s_close":
            fmt["strike"] = False
        elif kind == "link_open":
            link = str(child.attrs.get("href", ""))
            link_text = []
        elif kind == "link_close":
            if link:
                _add_hyperlink(paragraph, link, "".join(link_text) or link, fmt)
            link = None
        elif kind in ("text", "code_inline", "softbreak", "hardbreak", "image", "html_inline"):
            if kind == "image":
                text = f"[image: {child.content or ''}]({child.attrs.get('src', '')})"
            elif kind == "softbreak":
                text = " "
            elif kind == "hardbreak":
                paragraph.add_run().add_break()
                continue
            else:
                text = child.content
            if link is not None:
                link_text.append(text)
                continue
            run = paragraph.add_run(text)
            run.bold = fmt["bold"] or None
            run.italic = fmt["italic"] or None
            run.font.strike = fmt["strike"] or None
            if kind == "code_inline":
                run.font.name = "Consolas"
                run.font.highlight_color = WD_COLOR_INDEX.GRAY_25


def _list_style(ordered: bool, depth: int) -> str:
    base = "List Number" if ordered else "List Bullet"
    return base if depth <= 1 else f"{base} {min(depth, 3)}"


def to_docx(markdown: str, *, title: str | None = None) -> bytes:
    doc = new_docx()
    if title:
        doc.core_properties.title = title
    tokens = _md.parse(markdown or "")
    lists: list[bool] = []  # ordered? per open list level
    quote = 0
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        kind = tok.type
        if kind == "heading_open":
            level = int(tok.tag[1])
            para = doc.add_heading("", level=min(level, 9))
            _inline(para, tokens[i + 1])
            i += 3
            continue
        if kind in ("bullet_list_open", "ordered_list_open"):
            lists.append(kind == "ordered_list_open")
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "blockquote_open":
            quote += 1
        elif kind == "blockquote_close":
            quote -= 1
        elif kind == "paragraph_open":
            if lists:
                style = _list_style(lists[-1], len(lists))
            elif quote:
                style = "Quote"
            else:
                style = None
            para = doc.add_paragraph(style=style)
            _inline(para, tokens[i + 1])
            i += 3
            continue
        elif kind in ("fence", "code_block"):
            for line in tok.content.rstrip("\n").split("\n"):
                para = doc.add_paragraph()
                run = para.add_run(line)
                run.font.name = "Consolas"
                run.font.size = Pt(9)
                run.font.color.rgb = RGBColor(0x33, 0x33, 0x33)
        elif kind == "table_open":
            i = _table(doc, tokens, i)
            continue
        elif kind == "html_block":
            doc.add_paragraph(tok.content.strip())
        i += 1
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def _table(doc: Any, tokens: list[Any], start: int) -> int:
    rows: list[list[Any]] = []
    i = start + 1
    while i < len(tokens) and tokens[i].type != "table_close":
        kind = tokens[i].type
        if kind == "tr_open":
            rows.append([])
        elif kind == "inline":
            rows[-1].append(tokens[i])
        i += 1
    width = max((len(r) for r in rows), default=0)
    if rows and width:
        table = doc.add_table(rows=len(rows), cols=width)
        table.style = "Table Grid"
        for r, row in enumerate(rows):
            for c, cell_tok in enumerate(row):
                para = table.cell(r, c).paragraphs[0]
                _inline(para, cell_tok)
    return i + 1
