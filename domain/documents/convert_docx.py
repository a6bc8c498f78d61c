"""DOCX → Markdown: mammoth (DOCX → semantic HTML) then htmlmd (HTML → Markdown).

Before mammoth runs, the package is checked for zip bombs and lightly rewritten in memory:
- paragraph styles and paragraphs with an outline level become headings of that level;
- a heading's automatic (list) numbering becomes the start of its text, as Word shows it (`1.1 Scope`;
  docx_numbering.py);
- Office Math becomes LaTeX (omml.py): inline `$…$`, a display equation `$$…$$` on lines of its own;
- a chart becomes a Markdown table of the data its part caches (docx_charts.py), in the chart's place;
- content-control and legacy form checkboxes (which mammoth reads as inputs) become `- [x]` / `- [ ]`
  task items (htmlmd.py);
- heading paragraphs are marked with their place in the body, so each Markdown section's source blocks
  are known (the source map, used by docx_merge.py to apply merged changes to the original file);
- images are referenced by their name in the package (or their external http(s) link), never inlined,
  and a linked image's target is never opened (a `file://` link must not leak a server file).
"""

from __future__ import annotations

import hashlib
import io
import re
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from xml.parsers.expat import ExpatError

import mammoth
from lxml import etree

from domain.consensus import sections
from domain.documents import docx_charts, docx_numbering, htmlmd, omml
from domain.documents.errors import ConversionError
from domain.documents.safety import check_zip, read_member

_SPOOL_BYTES = 8 * 1024 * 1024
# Placeholders that markdownify leaves alone: an equation (D: display) and a heading's body block.
_MATH = "CONCORDMATH"
_MATH_RE = re.compile(r"CONCORDMATH(D?)(\d+)X")
_HEAD = "CONCORDHEAD"
_CHART = "CONCORDCHART"
_HEAD_RE = re.compile(r"CONCORDHEAD(\d+)X")
_CHART_RE = re.compile(r"CONCORDCHART(\d+)X")
R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_ONE_LINE = re.compile(r"^\s*(?:\||[-*+] |\d+[.)] |#|>)")
REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
# A DOCTYPE's internal entities are expanded (libxml2 bounds their expansion unless huge_tree is set);
# an external one (a file or URL) is never read: its reference is dropped (`_parse`).
_XML_PARSER = etree.XMLParser(resolve_entities="internal", no_network=True, huge_tree=False, load_dtd=False)


def _parse(name: str, xml: bytes) -> etree._Element:
    """A part of the package as a tree without entity references; a plain reason when it is not XML."""
    try:
        root = etree.fromstring(xml, _XML_PARSER)
    except etree.XMLSyntaxError as exc:
        if exc.code == etree.ErrorTypes.ERR_NO_MEMORY:  # libxml2 ran out of memory, the XML may be fine
            raise MemoryError(f"parsing {name}") from None
        raise ConversionError(f"corrupt DOCX: {name} is not well-formed XML ({exc.msg})") from None
    for ref in list(root.iter(etree.Entity)):
        parent = ref.getparent()
        if parent is not None:
            _remove_keeping_tail(parent, ref)
    return root


def _remove_keeping_tail(parent: etree._Element, node: etree._Element) -> None:
    if node.tail:
        prev = node.getprevious()
        if prev is not None:
            prev.tail = (prev.tail or "") + node.tail
        else:
            parent.text = (parent.text or "") + node.tail
    parent.remove(node)


def _plain_part(name: str, xml: bytes) -> bytes:
    """A part as mammoth may read it: one with a DOCTYPE is rewritten without it (entities expanded or
    dropped as `_parse` does), so no other XML parser ever sees a DTD."""
    if b"<!DOCTYPE" not in xml or not name.endswith((".xml", ".rels")):
        return xml
    return etree.tostring(_parse(name, xml), xml_declaration=True, encoding="UTF-8", standalone=True)


def _local(name: object) -> str:
    """The local part of a tag or attribute name. A comment's or processing instruction's tag is a
    function, not a name: those get "", so they match nothing (a comment must not fail the conversion)."""
    return name.rsplit("}", 1)[-1] if isinstance(name, str) else ""


def _w_ns(root: etree._Element) -> str:
    tag = root.tag if isinstance(root.tag, str) else ""  # a parsed root's tag is always a str
    return tag[1:].split("}", 1)[0]


def _outline_styles(styles_xml: bytes | None) -> dict[str, int]:
    """Style ids whose definition carries an outline level (0-based) → heading level 1-6."""
    if not styles_xml:
        return {}
    root = _parse("word/styles.xml", styles_xml)
    out: dict[str, int] = {}
    for style in root:
        if _local(style.tag) != "style":
            continue
        attrs = {_local(k): v for k, v in style.attrib.items()}
        if attrs.get("type") != "paragraph":
            continue
        name = next((c for c in style if _local(c.tag) == "name"), None)
        name_val = (
            next((v for k, v in name.attrib.items() if _local(k) == "val"), "") if name is not None else ""
        )
        lvl = style.xpath(".//*[local-name()='pPr']/*[local-name()='outlineLvl']/@*[local-name()='val']")
        if name_val.lower() == "title":
            out[attrs.get("styleId", "")] = 1
        elif lvl and str(lvl[0]).isdigit() and int(lvl[0]) < 9:
            out[attrs.get("styleId", "")] = min(int(lvl[0]) + 1, 6)
    return out


def _rels(zf: zipfile.ZipFile) -> dict[str, tuple[str, bool]]:
    name = "word/_rels/document.xml.rels"
    if name not in zf.namelist():
        return {}
    root = _parse(name, read_member(zf, name))
    return {
        r.get("Id", ""): (r.get("Target", ""), r.get("TargetMode") == "External")
        for r in root
        if _local(r.tag) == "Relationship"
    }


@dataclass
class _Found:
    """What the rewrite of word/document.xml noted: image refs and equations in order."""

    images: list[tuple[str, str]] = field(default_factory=list)
    maths: list[str] = field(default_factory=list)
    charts: list[str] = field(default_factory=list)  # relationship ids of the chart parts, in order


def blocks(body: etree._Element) -> list[etree._Element]:
    """The body's block elements (paragraphs, tables, content controls…) in order, without the final
    section properties: what a source map's block numbers count (docx_merge.py counts the same way)."""
    return [c for c in body if _local(c.tag) not in ("", "sectPr")]


def _mark_headings(root: etree._Element, q: Callable[[str], str], outline: dict[str, int]) -> None:
    """Each heading paragraph directly in the body gets a first run `CONCORDHEAD<n>X` (n its block
    number), so the Markdown heading it becomes is known (`_source_map`); the marks are removed after."""
    body = root.find(q("body"))
    if body is None:
        return
    for n, block in enumerate(blocks(body)):
        if block.tag != q("p") or not "".join(t.text or "" for t in block.iter(q("t"))).strip():
            continue
        ppr = block.find(q("pPr"))
        ps = ppr.find(q("pStyle")) if ppr is not None else None
        lvl = ppr.find(q("outlineLvl")) if ppr is not None else None
        style = (ps.get(q("val")) if ps is not None else None) or ""
        if style in outline or lvl is not None or style.lower().startswith(("heading", "title")):
            run = etree.Element(q("r"))
            etree.SubElement(run, q("t")).text = f"{_HEAD}{n}X"
            block.insert(1 if ppr is not None else 0, run)


def _number_headings(
    root: etree._Element,
    q: Callable[[str], str],
    outline: dict[str, int],
    numbering: docx_numbering.Numbering,
) -> None:
    """Word's automatic numbering of each heading becomes its text's start (`1.1 Section 1.1`); every
    numbered paragraph advances the counters, in document order, as Word counts them."""
    for p in root.iter(q("p")):
        ppr = p.find(q("pPr"))
        ps = ppr.find(q("pStyle")) if ppr is not None else None
        style = (ps.get(q("val")) if ps is not None else None) or ""
        label = docx_numbering.paragraph_number(p, style or None, numbering, q)
        if label is None:
            continue
        lvl = ppr.find(q("outlineLvl")) if ppr is not None else None
        if style in outline or lvl is not None or style.lower().startswith(("heading", "title")):
            run = etree.Element(q("r"))
            t = etree.SubElement(run, q("t"))
            t.text = f"{label} "
            t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
            p.insert(1 if ppr is not None else 0, run)


def _rewrite_document(
    xml: bytes, outline: dict[str, int], numbering_xml: bytes | None = None, styles_xml: bytes | None = None
) -> tuple[bytes, _Found]:
    """Headings by outline level, numbered as Word numbers them, and marked; math as placeholders; the new
    XML and what was found."""
    root = _parse("word/document.xml", xml)
    w = _w_ns(root)

    def q(name: str) -> str:
        return f"{{{w}}}{name}"

    found = _Found()
    images = found.images
    if numbering_xml:
        numbering = docx_numbering.load(
            _parse("word/numbering.xml", numbering_xml),
            _parse("word/styles.xml", styles_xml) if styles_xml else None,
            q,
        )
        _number_headings(root, q, outline, numbering)
    _mark_headings(root, q, outline)
    # A chart (DrawingML, its data in a part of its own) becomes a placeholder, replaced by a table of its
    # cached data once the Markdown is made (docx_charts.py); mammoth would drop it.
    for chart in list(root.iter(f"{{{docx_charts.C}}}chart")):
        drawing = next((a for a in chart.iterancestors() if _local(a.tag) == "drawing"), None)
        parent = drawing.getparent() if drawing is not None else None
        if drawing is None or parent is None:
            continue
        t = etree.Element(q("t"))
        t.text = f"{_CHART}{len(found.charts)}X"
        found.charts.append(chart.get(f"{{{R_NS}}}id") or "")
        parent.replace(drawing, t)
    for blip in root.iter():
        if _local(blip.tag) == "blip":
            attrs = {_local(k): v for k, v in blip.attrib.items()}
            if "embed" in attrs:
                images.append(("embed", attrs["embed"]))
            elif "link" in attrs:
                images.append(("link", attrs["link"]))
    for p in root.iter(q("p")):
        ppr = p.find(q("pPr"))
        style_id = None
        if ppr is not None:
            ps = ppr.find(q("pStyle"))
            style_id = ps.get(q("val")) if ps is not None else None
            lvl_el = ppr.find(q("outlineLvl"))
            lvl = (lvl_el.get(q("val")) if lvl_el is not None else None) or ""
            level = None
            if style_id in outline:
                level = outline[style_id]
            elif lvl.isdigit() and int(lvl) < 9:
                level = min(int(lvl) + 1, 6)
            if level is not None and not (style_id or "").lower().startswith("heading"):
                if ps is None:
                    ps = etree.SubElement(ppr, q("pStyle"))
                    ppr.insert(0, ps)
                ps.set(q("val"), f"ConcordHeading{level}")
    # Office Math: each outermost math element becomes a placeholder run, replaced by its LaTeX once the
    # Markdown is made (markdownify would escape the LaTeX's underscores and asterisks).
    for math in list(root.iter()):
        if _local(math.tag) not in ("oMathPara", "oMath"):
            continue
        parent = math.getparent()
        if parent is None or any(_local(a.tag) in ("oMathPara", "oMath") for a in math.iterancestors()):
            continue
        display = _local(math.tag) == "oMathPara"
        latex = omml.to_latex(math)
        run = etree.Element(q("r"))
        t = etree.SubElement(run, q("t"))
        t.text = f" {_MATH}{'D' if display else ''}{len(found.maths)}X " if latex else ""
        t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
        found.maths.append(latex)
        if _local(parent.tag) == "body":  # a display equation outside a paragraph
            para = etree.Element(q("p"))
            para.append(run)
            parent.replace(math, para)
        else:
            parent.replace(math, run)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True), found


def _chart_tables(zf: zipfile.ZipFile, rels: dict[str, tuple[str, bool]], rids: list[str]) -> list[str]:
    """Each chart's cached data as a Markdown table ('' for a chart whose part is missing or external)."""
    names = set(zf.namelist())
    out: list[str] = []
    for rid in rids:
        target, external = rels.get(rid, ("", True))
        name = target.lstrip("/") if target.startswith("/") else f"word/{target}"
        out.append(
            docx_charts.to_markdown(_parse(name, read_member(zf, name)))
            if not external and name in names
            else ""
        )
    return out


def _put_charts(markdown: str, tables: list[str]) -> str:
    """Chart placeholders back as their tables, each a block of its own."""
    if _CHART not in markdown:
        return markdown

    def sub(m: re.Match[str]) -> str:
        n = int(m.group(1))
        table = tables[n] if n < len(tables) else ""
        return f"\n\n{table}\n\n" if table else ""

    out = _CHART_RE.sub(sub, markdown)
    out = "\n".join(line.rstrip(" \t") for line in out.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", out).strip("\n") + "\n"


def _prepare(data: bytes | Path) -> tuple[IO[bytes], list[str], list[str], list[str]]:
    try:
        zf = zipfile.ZipFile(data if isinstance(data, Path) else io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ConversionError(f"corrupt DOCX: {exc}") from None
    with zf:
        check_zip(zf)
        names = zf.namelist()
        if "word/document.xml" not in names:
            raise ConversionError("corrupt DOCX: word/document.xml is missing")
        styles_xml = read_member(zf, "word/styles.xml") if "word/styles.xml" in names else None
        outline = _outline_styles(styles_xml)
        numbering_xml = read_member(zf, "word/numbering.xml") if "word/numbering.xml" in names else None
        doc_xml, found = _rewrite_document(
            read_member(zf, "word/document.xml"), outline, numbering_xml, styles_xml
        )
        rels = _rels(zf)
        charts = _chart_tables(zf, rels, found.charts)
        refs: list[str] = []
        for kind, rid in found.images:
            target, external = rels.get(rid, ("", False))
            if kind == "link" or external:
                # A local link (file:///C:/…/chart.png) keeps its file's name only: never opened, no path.
                local = target.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
                refs.append(target if re.match(r"^https?://", target) else local)
            else:
                refs.append(target.lstrip("/").removeprefix("word/"))
        # The rewritten package goes to a temporary file once it is large (mammoth reads it part by part).
        out = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)  # noqa: SIM115 (handed to the caller)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as new:
            for info in zf.infolist():
                name = info.filename
                body = doc_xml if name == "word/document.xml" else _plain_part(name, read_member(zf, name))
                new.writestr(name, body)
    out.seek(0)
    return out, refs, found.maths, charts


def convert(data: bytes | Path) -> str:
    """A DOCX's Markdown; from a path, the archive's members are read from the file one at a time."""
    return convert_with_map(data)[0]


def convert_with_map(data: bytes | Path) -> tuple[str, dict[str, Any] | None]:
    """A DOCX's Markdown and its source map (`_source_map`: which body blocks each section came from)."""
    prepared, refs, maths, charts = _prepare(data)
    counter = iter(range(len(refs) + 10_000))

    def image(img: object) -> dict[str, str]:
        n = next(counter)
        return {"src": refs[n] if n < len(refs) else f"media/image{n + 1}"}

    style_map = "\n".join(f"p.ConcordHeading{n} => h{n}:fresh" for n in range(1, 7))
    style_map += "\np[style-name='Title'] => h1:fresh"
    try:
        with prepared:
            result = mammoth.convert_to_html(
                prepared, convert_image=mammoth.images.img_element(image), style_map=style_map
            )
    except (zipfile.BadZipFile, ExpatError) as exc:
        raise ConversionError(f"corrupt DOCX: {exc}") from None
    except (KeyError, ValueError, IndexError, AttributeError, TypeError):
        # mammoth met a part it cannot use; its exception's text means nothing to the document's owner.
        raise ConversionError(
            "corrupt DOCX: a part of the document is missing or not what Word writes"
        ) from None
    markdown = _put_maths(_tex_unescaped(_one_note_each(htmlmd.to_markdown(result.value))), maths)
    markdown = _put_charts(markdown, charts)
    return _source_map(markdown)


def _tex_unescaped(markdown: str) -> str:
    """LaTeX typed as text (`$x_{1}$`, as a Concord download writes maths) without markdownify's
    escapes of `_` and `*`: only inside a `$…$` span that has a LaTeX script or command."""

    def plain(found: re.Match[str]) -> str:
        span = found.group()
        if not re.search(r"\\_\{|\^\{|\\[A-Za-z]{2,}", span):
            return span
        return span.replace("\\_", "_").replace("\\*", "*")

    return re.sub(r"\$\$[^$\n]+\$\$|\$[^$\n]+\$", plain, markdown)


def _one_note_each(markdown: str) -> str:
    """mammoth lists a note once per reference to it; a note referred to twice is defined once."""
    seen: set[str] = set()
    out: list[str] = []
    for line in markdown.split("\n"):
        found = re.match(r"^\[\^([^\]\s]+)\]: ", line)
        if found and found.group(1) in seen:
            continue
        if found:
            seen.add(found.group(1))
        out.append(line)
    return "\n".join(out)


def _put_maths(markdown: str, maths: list[str]) -> str:
    """Placeholders back to LaTeX: inline `$…$`; display `$$…$$` on lines of their own, except in a table
    row, list item, heading or quote, which must stay one line."""

    def line(text: str) -> str:
        one_line = _ONE_LINE.match(text) is not None

        def sub(m: re.Match[str]) -> str:
            latex = maths[int(m.group(2))] if int(m.group(2)) < len(maths) else ""
            if not m.group(1):
                return f"${latex}$"
            return f"$${latex}$$" if one_line else f"\n\n$${latex}$$\n\n"

        return _MATH_RE.sub(sub, text)

    if _MATH not in markdown:
        return markdown
    out = "\n".join(line(text) for text in markdown.split("\n"))
    out = re.sub(r"[ \t]*\n\n(\$\$.*?\$\$)\n\n[ \t]*", r"\n\n\1\n\n", out)
    return re.sub(r"\n{3,}", "\n\n", out).strip("\n") + "\n"


def _source_map(marked: str) -> tuple[str, dict[str, Any] | None]:
    """Remove the heading marks; the map says, for each section of the Markdown, the body block of its
    heading, the blocks of its body and a hash of its Markdown body (docx_merge.py keeps a section's
    original blocks while its body hashes the same). None when a Markdown heading has no mark (it came
    from inside a table or a content control), so no block range can be given for it."""
    heads: dict[int, int] = {}
    lines = marked.split("\n")
    for n, text in enumerate(lines):
        found = _HEAD_RE.search(text)
        if found and text.lstrip().startswith("#"):
            heads[n] = int(found.group(1))
        lines[n] = _HEAD_RE.sub("", text)
    markdown = "\n".join(lines)
    parsed = sections.parse(markdown)
    out: list[dict[str, Any]] = []
    for sec in parsed:
        block = -1 if sec.id == sections.ROOT_ID else heads.get(sec.heading_start)
        if block is None:
            return markdown, None
        out.append({"id": sec.id, "title": sec.title, "heading": block, "sha": body_hash(markdown, sec)})
    starts = [s["heading"] for s in out if s["heading"] >= 0]
    if starts != sorted(set(starts)):
        return markdown, None
    for n, sec_map in enumerate(out):
        later = [s["heading"] for s in out[n + 1 :]]
        sec_map["start"] = sec_map["heading"] + 1
        sec_map["end"] = later[0] if later else None  # None: to the end of the body
    return markdown, {"version": 1, "sections": out}


def body_hash(markdown: str, sec: sections.Section) -> str:
    return hashlib.sha256(sections.body(markdown, sec).strip().encode()).hexdigest()
