"""Markdown → Word with python-docx, for download.

`Renderer` writes Markdown blocks at the end of a Word document's body with that document's own styles:
headings as Heading N (a leading `#` as Title when asked), bullet and numbered lists as List
Bullet/List Number paragraphs on real Word numbering (each list restarts at 1), tables as Word tables
in the document's table style, quotes as Quote, footnotes (`[^1]` … `[^1]: text`) as real Word footnotes,
images embedded when their bytes are at hand. A style the document lacks is copied from python-docx's
default template. `to_docx` renders a whole Markdown document into that template; docx_merge.py renders
changed sections into the uploaded original.

LaTeX maths (`$…$`, `$$…$$`) is written as its LaTeX text: Word has no LaTeX import to build equations
from it.

Every text reaches the XML through the Renderer, which first passes it through xmltext.safe: characters
XML cannot carry (control characters, U+FFFE/U+FFFF) become visible ones instead of failing the file."""

from __future__ import annotations

import copy
import io
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, cast

from docx import Document as new_docx
from docx.document import Document as WordDocument
from docx.enum.text import WD_COLOR_INDEX
from docx.opc.constants import CONTENT_TYPE, RELATIONSHIP_TYPE
from docx.opc.packuri import PackURI
from docx.opc.part import Part, XmlPart
from docx.oxml import OxmlElement, parse_xml
from docx.oxml.ns import nsdecls, qn
from docx.oxml.text.paragraph import CT_P
from docx.parts.numbering import NumberingPart
from docx.shared import Emu, Inches, Pt, RGBColor
from docx.text.paragraph import Paragraph
from lxml import etree
from markdown_it import MarkdownIt

from domain.documents import xmltext

_md = MarkdownIt("commonmark").enable("table").enable("strikethrough")
_NOTE_DEF = re.compile(r"^\[\^([^\]\s]+)\]:[ \t]?(.*)$")
_NOTE_REF = re.compile(r"\[\^([^\]\s]+)\]")
# LaTeX spans are kept out of Markdown parsing (their `\\`, `_` and `*` are not Markdown).
_TEX = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$[^$\n]+?\$")
_TEX_MARK = re.compile(r"CONCORDTEX(\d{1,9})X")
_NOTE_MARK = re.compile(r"(CONCORDNOTE\d+X)")
MAX_IMAGE_WIDTH = Inches(6)
_NS = {"w": "http://schemas.openxmlformats.org/wordprocessingml/2006/main"}
ImageSource = Callable[[str], bytes | None]


def split_notes(markdown: str) -> tuple[str, dict[str, str]]:
    """The Markdown without its footnote definitions, and the definitions by label (a definition's
    indented continuation lines join its text)."""
    out: list[str] = []
    notes: dict[str, str] = {}
    label: str | None = None
    for line in markdown.split("\n"):
        found = _NOTE_DEF.match(line)
        if found:
            label = found.group(1)
            notes[label] = found.group(2).strip()
        elif label is not None and line.startswith(("    ", "\t")) and line.strip():
            notes[label] = f"{notes[label]} {line.strip()}".strip()
        else:
            label = None
            out.append(line)
    return "\n".join(out), notes


@lru_cache(maxsize=1)
def _template_styles() -> bytes:
    return etree.tostring(new_docx().styles.element)


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


class Footnotes:
    """The document's footnotes part (created on first use): references to existing notes by their id,
    new notes appended with the next free id."""

    def __init__(self, doc: WordDocument) -> None:
        self.doc = doc
        self._part: Part | None = None
        self._root: Any = None
        self._made: dict[str, int] = {}

    def _find(self) -> Any:
        """The notes part's XML when the document has one."""
        if self._root is None:
            for rel in self.doc.part.rels.values():
                if rel.reltype == RELATIONSHIP_TYPE.FOOTNOTES and not rel.is_external:
                    self._part = rel.target_part
                    self._root = parse_xml(self._part.blob)
        return self._root

    def _load(self) -> Any:
        if self._find() is not None:
            return self._root
        doc_part = self.doc.part
        xml = (
            f"<w:footnotes {nsdecls('w')}>"
            '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
            '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/>'
            "</w:r></w:p></w:footnote></w:footnotes>"
        )
        self._root = parse_xml(xml)
        self._part = Part(PackURI("/word/footnotes.xml"), CONTENT_TYPE.WML_FOOTNOTES, b"", doc_part.package)
        doc_part.relate_to(self._part, RELATIONSHIP_TYPE.FOOTNOTES)
        return self._root

    def existing(self, label: str) -> int | None:
        """The id of the original's note `label` (mammoth names DOCX footnote n `[^n]`)."""
        root = self._find()
        if not label.isdigit() or root is None:
            return None
        ids = root.xpath(
            f'./w:footnote[@w:id="{int(label)}"][not(@w:type) or @w:type="normal"]', namespaces=_NS
        )
        return int(label) if ids else None

    def text(self, note_id: int) -> str:
        root = self._find()
        return (
            ""
            if root is None
            else "".join(root.xpath(f'./w:footnote[@w:id="{note_id}"]//w:t/text()', namespaces=_NS))
        )

    def add(self, label: str, text: str, render: Callable[[Paragraph, str], None]) -> int:
        if label in self._made:
            return self._made[label]
        root = self._load()
        ids = [
            int(i) for i in root.xpath("./w:footnote/@w:id", namespaces=_NS) if str(i).lstrip("-").isdigit()
        ]
        note_id = max([0, *ids]) + 1
        note = parse_xml(
            f'<w:footnote {nsdecls("w")} w:id="{note_id}"><w:p><w:pPr/><w:r><w:rPr>'
            '<w:vertAlign w:val="superscript"/></w:rPr><w:footnoteRef/></w:r>'
            '<w:r><w:t xml:space="preserve"> </w:t></w:r></w:p></w:footnote>'
        )
        if "FootnoteText" in {s.style_id for s in self.doc.styles}:
            note[0][0].append(parse_xml(f'<w:pStyle {nsdecls("w")} w:val="FootnoteText"/>'))
        root.append(note)
        render(Paragraph(cast(CT_P, note[0]), self.doc._body), text)
        self._made[label] = note_id
        return note_id

    def reference(self, paragraph: Paragraph, note_id: int) -> None:
        run = paragraph.add_run()
        props: Any = run._r.get_or_add_rPr()  # lxml accepts any element; the stubs want CT_RPr children
        if "FootnoteReference" in {s.style_id for s in self.doc.styles}:
            props.append(parse_xml(f'<w:rStyle {nsdecls("w")} w:val="FootnoteReference"/>'))
        props.append(parse_xml(f'<w:vertAlign {nsdecls("w")} w:val="superscript"/>'))
        cast(Any, run._r).append(parse_xml(f'<w:footnoteReference {nsdecls("w")} w:id="{note_id}"/>'))

    def save(self) -> None:
        if self._part is None or self._root is None:
            return
        if isinstance(self._part, XmlPart):  # a python-docx that parses notes itself serialises its tree
            self._part._element = self._root
        else:  # a plain part keeps its bytes; these are the new ones
            self._part._blob = etree.tostring(
                self._root, xml_declaration=True, encoding="UTF-8", standalone=True
            )


class Numbering:
    """Real Word lists: one bullet and one decimal definition, and a new numbering instance per list so
    each numbered list starts at 1."""

    def __init__(self, doc: WordDocument) -> None:
        try:
            part = doc.part.part_related_by(RELATIONSHIP_TYPE.NUMBERING)
        except KeyError:  # python-docx cannot make one itself
            part = NumberingPart(
                PackURI("/word/numbering.xml"),
                CONTENT_TYPE.WML_NUMBERING,
                parse_xml(f"<w:numbering {nsdecls('w')}/>"),
                doc.part.package,
            )
            doc.part.relate_to(part, RELATIONSHIP_TYPE.NUMBERING)
        self.root = cast(NumberingPart, part).element
        self._abstract: dict[bool, int] = {}

    def _definition(self, ordered: bool) -> int:
        if ordered in self._abstract:
            return self._abstract[ordered]
        ids = [int(i) for i in self.root.xpath("./w:abstractNum/@w:abstractNumId")]
        abstract_id = max([-1, *ids]) + 1
        bullets = "•◦▪"
        levels = "".join(
            f'<w:lvl w:ilvl="{n}"><w:start w:val="1"/>'
            f'<w:numFmt w:val="{("decimal", "lowerLetter", "lowerRoman")[n % 3] if ordered else "bullet"}"/>'
            f'<w:lvlText w:val="{f"%{n + 1}." if ordered else bullets[n % 3]}"/><w:lvlJc w:val="left"/>'
            f'<w:pPr><w:ind w:left="{720 * (n + 1)}" w:hanging="360"/></w:pPr></w:lvl>'
            for n in range(9)
        )
        abstract = parse_xml(
            f'<w:abstractNum {nsdecls("w")} w:abstractNumId="{abstract_id}">'
            f'<w:multiLevelType w:val="hybridMultilevel"/>{levels}</w:abstractNum>'
        )
        first_num = self.root.find(qn("w:num"))
        if first_num is not None:
            first_num.addprevious(abstract)
        else:
            self.root.append(abstract)
        self._abstract[ordered] = abstract_id
        return abstract_id

    def new_list(self, ordered: bool) -> int:
        num = self.root.add_num(self._definition(ordered))
        return int(num.numId)


def _list_style(ordered: bool, depth: int) -> str:
    base = "List Number" if ordered else "List Bullet"
    return base if depth <= 1 else f"{base} {min(depth, 3)}"


class Renderer:
    def __init__(self, doc: WordDocument, *, notes: dict[str, str], image: ImageSource | None = None) -> None:
        self.doc = doc
        self.notes = {label: xmltext.safe(text) for label, text in notes.items()}
        self.image = image or (lambda src: None)
        self.footnotes = Footnotes(doc)
        self._numbering: Numbering | None = None
        self._styles: dict[str, str | None] = {}
        self._tex: list[str] = []
        self._in_note = False
        self.heading_styles: dict[int, str] = {}  # Markdown level → the document's style for it
        found = doc.element.body.xpath("./w:tbl/w:tblPr/w:tblStyle/@w:val")
        self.table_style_id: str | None = str(found[0]) if found else None

    # Styles -------------------------------------------------------------------------------------------

    def style(self, name: str) -> str | None:
        """`name` once the document has the style (copied from the default template when it lacks it);
        None when neither has it."""
        if name in self._styles:
            return self._styles[name]
        try:
            self.doc.styles[name]
            self._styles[name] = name
        except KeyError:
            self._styles[name] = name if self._copy_style(name) else None
        return self._styles[name]

    def _copy_style(self, name: str) -> bool:
        template = etree.fromstring(_template_styles())
        wanted = name.lower()
        for style in template.findall(qn("w:style")):
            style_name = style.find(qn("w:name"))
            if style_name is not None and (style_name.get(qn("w:val")) or "").lower() == wanted:
                made = copy.deepcopy(style)
                for num in made.iter(qn("w:numPr")):  # numbering is the paragraph's own (Numbering)
                    parent = num.getparent()
                    if parent is not None:
                        parent.remove(num)
                self.doc.styles.element.append(made)
                return True
        return False

    # Blocks -------------------------------------------------------------------------------------------

    def _add_paragraph(self, style: str | None = None) -> Paragraph:
        return self.doc.add_paragraph(style=self.style(style) if style else None)

    def render(self, markdown: str, *, title: bool = False) -> None:
        """Append the Markdown's blocks to the document body (before its section properties)."""
        text, _ = split_notes(xmltext.safe(markdown))
        text = _TEX.sub(self._hold_tex, text)
        tokens = _md.parse(text)
        # A leading `#` heading is the Title when asked (the original document began with its Title).
        title_at = 0 if title and tokens and tokens[0].tag == "h1" else -1
        lists: list[tuple[bool, int]] = []  # (ordered, numbering instance) per open list
        first_in_item = False
        quote = 0
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            kind = tok.type
            if kind == "heading_open":
                level = int(tok.tag[1])
                name = "Title" if i == title_at else self.heading_styles.get(level, f"Heading {level}")
                para = self._add_paragraph(name)
                self.inline(para, tokens[i + 1])
                i += 3
                continue
            if kind in ("bullet_list_open", "ordered_list_open"):
                ordered = kind == "ordered_list_open"
                if self._numbering is None:
                    self._numbering = Numbering(self.doc)
                lists.append((ordered, self._numbering.new_list(ordered)))
            elif kind in ("bullet_list_close", "ordered_list_close"):
                lists.pop()
            elif kind == "list_item_open":
                first_in_item = True
            elif kind == "blockquote_open":
                quote += 1
            elif kind == "blockquote_close":
                quote -= 1
            elif kind == "paragraph_open":
                para = self._paragraph(lists, first_in_item, quote)
                first_in_item = False
                self.inline(para, tokens[i + 1])
                i += 3
                continue
            elif kind in ("fence", "code_block"):
                for line in self._restore_tex(tok.content).rstrip("\n").split("\n"):
                    para = self._add_paragraph()
                    run = para.add_run(line)
                    run.font.name = "Consolas"
                    run.font.size = Pt(9)
                    run.font.color.rgb = RGBColor(0x33, 0x33, 0x33)
            elif kind == "table_open":
                i = self._table(tokens, i)
                continue
            elif kind == "html_block":
                self._add_paragraph().add_run(self._restore_tex(tok.content.strip()))
            i += 1

    def _paragraph(self, lists: list[tuple[bool, int]], first_in_item: bool, quote: int) -> Paragraph:
        if not lists:
            return self._add_paragraph("Quote" if quote else None)
        ordered, num_id = lists[-1]
        para = self._add_paragraph(_list_style(ordered, len(lists)))
        num_pr = cast(Any, para._p.get_or_add_pPr()).get_or_add_numPr()  # CT_PPr has it; its stubs not
        num_pr.get_or_add_ilvl().val = min(len(lists) - 1, 8)
        # A list item's later paragraphs continue it without a number of their own.
        num_pr.get_or_add_numId().val = num_id if first_in_item else 0
        return para

    def _table(self, tokens: list[Any], start: int) -> int:
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
            table = self.doc.add_table(rows=len(rows), cols=width)
            if self.table_style_id:  # the document's own table style, as its first table has it
                style = table._tbl.tblPr.find(qn("w:tblStyle"))
                if style is None:
                    style = OxmlElement("w:tblStyle")
                    table._tbl.tblPr.insert(0, style)
                style.set(qn("w:val"), self.table_style_id)
            elif self.style("Table Grid"):
                table.style = "Table Grid"
            for r, row in enumerate(rows):
                for c, cell_tok in enumerate(row[:width]):
                    para = table.cell(r, c).paragraphs[0]
                    self.inline(para, cell_tok)
            header = table.rows[0]._tr.get_or_add_trPr()
            header.append(OxmlElement("w:tblHeader"))
        return i + 1

    # Inline -------------------------------------------------------------------------------------------

    def _hold_tex(self, found: re.Match[str]) -> str:
        self._tex.append(found.group())
        return f"CONCORDTEX{len(self._tex) - 1}X"

    def _restore_tex(self, text: str) -> str:
        # A mark the text itself happened to hold (no such span was held) stays as it was written.
        held = self._tex
        return _TEX_MARK.sub(lambda m: held[n] if (n := int(m.group(1))) < len(held) else m.group(), text)

    def inline(self, paragraph: Paragraph, token: Any) -> None:
        fmt = {"bold": False, "italic": False, "strike": False}
        link: str | None = None
        link_text: list[str] = []
        for child in token.children or []:
            kind = child.type
            if kind in ("strong_open", "strong_close"):
                fmt["bold"] = kind == "strong_open"
            elif kind in ("em_open", "em_close"):
                fmt["italic"] = kind == "em_open"
            elif kind in ("s_open", "s_close"):
                fmt["strike"] = kind == "s_open"
            elif kind == "link_open" and not self._in_note:
                link = str(child.attrs.get("href", ""))
                link_text = []
            elif kind == "link_close" and not self._in_note:
                if link:
                    _add_hyperlink(paragraph, link, self._restore_tex("".join(link_text)) or link, fmt)
                link = None
            elif kind == "image" and self._in_note:
                self._text(paragraph, f"[image: {child.content or ''}]", fmt, code=False)
            elif kind == "image":
                self._image(paragraph, str(child.attrs.get("src", "")), child.content or "")
            elif kind == "hardbreak":
                paragraph.add_run().add_break()
            elif kind in ("text", "code_inline", "softbreak", "html_inline"):
                text = " " if kind == "softbreak" else self._restore_tex(child.content)
                if link is not None:
                    link_text.append(text)
                    continue
                self._text(paragraph, text, fmt, code=kind == "code_inline")

    def _text(self, paragraph: Paragraph, text: str, fmt: dict[str, bool], *, code: bool) -> None:
        parts = [text] if code or self._in_note else _NOTE_REF.split(text)
        for n, part in enumerate(parts):
            if n % 2 == 1:  # a footnote label
                if self._note(paragraph, part):
                    continue
                part = f"[^{part}]"
            if not part:
                continue
            run = paragraph.add_run(part)
            run.bold = fmt["bold"] or None
            run.italic = fmt["italic"] or None
            run.font.strike = fmt["strike"] or None
            if code:
                run.font.name = "Consolas"
                run.font.highlight_color = WD_COLOR_INDEX.GRAY_25

    def _note(self, paragraph: Paragraph, label: str) -> bool:
        """A reference to footnote `label`: the original's own note while the Markdown's definition still
        says the same (or there is none), else a new note with the definition's text."""
        note_id = self.footnotes.existing(label)
        if label in self.notes and (note_id is None or not self._same_note(note_id, label)):
            note_id = self.footnotes.add(label, self.notes[label], self._note_text)
        if note_id is None:
            return False
        self.footnotes.reference(paragraph, note_id)
        return True

    def _same_note(self, note_id: int, label: str) -> bool:
        said = self.footnotes.text(note_id)
        return " ".join(said.split()) == " ".join(_plain(self.notes[label]).split())

    def _note_text(self, paragraph: Paragraph, text: str) -> None:
        """A note's text: its links and images as text (their relationships would belong to the notes
        part, not the document's), no notes within notes."""
        tokens = _md.parseInline(_TEX.sub(self._hold_tex, text))
        self._in_note = True
        try:
            if tokens:
                self.inline(paragraph, tokens[0])
        finally:
            self._in_note = False

    def _image(self, paragraph: Paragraph, src: str, alt: str) -> None:
        data = self.image(src) if src else None
        if data:
            try:
                shape = paragraph.add_run().add_picture(io.BytesIO(data))
            except Exception:  # noqa: BLE001 (not an image python-docx can place: its reference is kept)
                data = None
            else:
                if shape.width and shape.width > MAX_IMAGE_WIDTH:
                    shape.height = Emu(int(shape.height * MAX_IMAGE_WIDTH / shape.width))
                    shape.width = MAX_IMAGE_WIDTH
                return
        if re.match(r"^https?://", src):
            _add_hyperlink(paragraph, src, alt or src, {})
        else:
            paragraph.add_run(f"[image: {alt}]" + (f" ({src})" if src else ""))

    def finish(self) -> None:
        self.footnotes.save()


def _plain(markdown: str) -> str:
    """A footnote's Markdown as its words (for comparing with the original note's text)."""
    return re.sub(r"[*_`]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", markdown)


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


def save(doc: WordDocument) -> bytes:
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def to_docx(markdown: str, *, title: str | None = None, image: ImageSource | None = None) -> bytes:
    """A Word document of the Markdown, in python-docx's default template."""
    doc = new_docx()
    if title:
        doc.core_properties.title = xmltext.safe(title)
    _, notes = split_notes(markdown or "")
    renderer = Renderer(doc, notes=notes, image=image)
    renderer.render(markdown or "")
    renderer.finish()
    return save(doc)
