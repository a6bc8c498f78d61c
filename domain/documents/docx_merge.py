"""The DOCX download of a document uploaded as DOCX: the original file with the merged section changes
applied to it.

The conversion recorded a source map (convert_docx._source_map): for each Markdown section, the block of
the original body its heading paragraph is, the blocks of its body, and a hash of its Markdown body. On
download the body is rebuilt in the current Markdown's section order: a section whose body still hashes
the same keeps its original blocks as they are (the element itself, so its runs, styles, images,
fields, bookmarks and footnote references are untouched); a changed section keeps its heading paragraph
and gets new paragraphs rendered from its new Markdown in the document's own styles (export_docx.Renderer);
a section the original did not have (a change that added a heading) is rendered whole. Everything
outside the body (styles, numbering, headers, footers, footnotes, media, settings) is the original's.

Without a usable map (a document converted before maps were kept, a heading inside a table, a body that
does not match the map) the whole body is rendered from the Markdown into the original package, which
still keeps its styles, headers, footers and section settings, and embeds the images the Markdown names
from the package's own media."""

from __future__ import annotations

import copy
import hashlib
import logging
import zipfile
from pathlib import Path
from typing import Any

import docx
from docx.document import Document as WordDocument
from docx.oxml.ns import qn
from lxml import etree

from domain.consensus import sections
from domain.documents import export_docx
from domain.documents.convert_docx import blocks as body_blocks
from domain.documents.errors import ConversionError
from domain.documents.safety import check_zip

log = logging.getLogger("concord.documents")
Keep = tuple[int, int]  # a range of original blocks kept as they are
Render = tuple[str, Keep | None]  # Markdown to render, and the original blocks it replaces


def _hash(markdown: str, sec: sections.Section) -> str:
    return hashlib.sha256(sections.body(markdown, sec).strip().encode()).hexdigest()


def plan(markdown: str, source_map: dict[str, Any] | None, count: int) -> list[Keep | Render] | None:
    """The new body as kept block ranges and Markdown to render, in order; None when the map cannot be
    used for this body (`count` blocks)."""
    if not source_map or source_map.get("version") != 1:
        return None
    original: list[dict[str, Any]] = source_map.get("sections") or []
    heads = [s["heading"] for s in original if s["heading"] >= 0]
    if any(h >= count for h in heads) or any((s.get("end") or 0) > count for s in original):
        return None
    by_id = {s["id"]: s for s in original}
    steps: list[Keep | Render] = []
    first = original[0] if original else None
    if first is None:
        return [(0, count)] if not markdown.strip() else None
    if first["heading"] > 0:  # blocks before the first heading that made no Markdown (empty paragraphs…)
        steps.append((0, first["heading"]))
    for sec in sections.parse(markdown):
        was = by_id.get(sec.id)
        if was is not None and was["title"] != sec.title:
            was = None
        body = sections.body(markdown, sec)
        if was is None:
            heading = "" if sec.id == sections.ROOT_ID else "#" * sec.heading_level + " " + sec.title
            steps.append(("\n\n".join(p for p in (heading, body) if p), None))
            continue
        if was["heading"] >= 0:
            steps.append((was["heading"], was["heading"] + 1))
        end = count if was.get("end") is None else int(was["end"])
        if _hash(markdown, sec) == was["sha"]:
            steps.append((int(was["start"]), end))
        else:
            steps.append((body, (int(was["start"]), end)))
    return steps


def _package_image(doc: WordDocument) -> export_docx.ImageSource:
    """An image the Markdown names by its place in the package (`media/image1.png`), from the package."""
    parts = {str(p.partname).lstrip("/"): p for p in doc.part.package.iter_parts()}

    def image(src: str) -> bytes | None:
        part = parts.get("word/" + src.lstrip("/")) or parts.get(src.lstrip("/"))
        return part.blob if part is not None and part.content_type.startswith("image/") else None

    return image


def _append(body: Any, block: etree._Element) -> None:
    sect = body.find(qn("w:sectPr"))
    if sect is not None:
        sect.addprevious(block)
    else:
        body.append(block)


def merge(original: Path, markdown: str, source_map: dict[str, Any] | None, *, title: str) -> bytes:
    """The original DOCX at `original` with the current Markdown's changes applied (see the module)."""
    try:
        return _merge(original, markdown, source_map, title=title)
    except FileNotFoundError:
        raise
    except Exception:  # a part python-docx cannot take; the download must still be the document
        log.exception("applying changes to %s failed; its download is built from Markdown", original.name)
        return export_docx.to_docx(markdown, title=title)


def _merge(original: Path, markdown: str, source_map: dict[str, Any] | None, *, title: str) -> bytes:
    try:
        with zipfile.ZipFile(original) as zf:
            check_zip(zf)
        doc = docx.Document(str(original))
    except (zipfile.BadZipFile, ConversionError, ValueError, KeyError) as exc:
        # Not a package python-docx can edit (Strict Open XML, say): a new file from the Markdown.
        log.info("download of %s built from Markdown: %s", original.name, exc)
        return export_docx.to_docx(markdown, title=title)
    body = doc.element.body
    originals = body_blocks(body)
    steps = plan(markdown, source_map, len(originals))
    _, notes = export_docx.split_notes(markdown)
    renderer = export_docx.Renderer(doc, notes=notes, image=_package_image(doc))
    if steps is not None:
        renderer.heading_styles = _heading_styles(doc, markdown, source_map or {}, originals)
    title_first = _starts_with_title(doc, originals)
    for block in originals:
        body.remove(block)
    if steps is None:
        renderer.render(markdown, title=title_first)
    else:
        for step in steps:
            if isinstance(step[0], str):
                text, replaced = step
                renderer.render(text)
                if replaced is not None:
                    _keep_section_breaks(body, originals[replaced[0] : replaced[1]])
            else:
                for block in originals[step[0] : step[1]]:
                    _append(body, block)
    renderer.finish()
    return export_docx.save(doc)


def _heading_styles(
    doc: WordDocument, markdown: str, source_map: dict[str, Any], originals: list[etree._Element]
) -> dict[int, str]:
    """The style the original's own headings of each Markdown level have (a heading a change adds looks
    like its siblings, say a custom "Chapter" style); the Title is not a level's style."""
    names = {s.style_id: s.name for s in doc.styles if s.name}
    by_id = {s["id"]: s for s in source_map.get("sections") or []}
    out: dict[int, str] = {}
    for sec in sections.parse(markdown):
        was = by_id.get(sec.id)
        if was is None or was["heading"] < 0 or sec.heading_level in out:
            continue
        style = originals[was["heading"]].find(f"{qn('w:pPr')}/{qn('w:pStyle')}")
        name = names.get(style.get(qn("w:val")) or "") if style is not None else None
        if name and name != "Title":
            out[sec.heading_level] = name
    return out


def _keep_section_breaks(body: Any, replaced: list[etree._Element]) -> None:
    """A replaced paragraph that ended a section of the document (its own `w:sectPr`: page setup,
    headers and footers of the pages before it) leaves an empty paragraph carrying that break."""
    for block in replaced:
        for sect in block.findall(f"{qn('w:pPr')}/{qn('w:sectPr')}"):
            para = etree.SubElement(body, qn("w:p"))
            etree.SubElement(para, qn("w:pPr")).append(copy.deepcopy(sect))
            _append(body, para)


def _starts_with_title(doc: WordDocument, blocks: list[etree._Element]) -> bool:
    """Whether the original's first text paragraph is in the Title style (kept when it is rebuilt)."""
    title_ids = {s.style_id for s in doc.styles if s.name == "Title"}
    for block in blocks:
        if block.tag != qn("w:p") or not "".join(block.itertext()).strip():
            continue
        style = block.find(f"{qn('w:pPr')}/{qn('w:pStyle')}")
        return style is not None and style.get(qn("w:val")) in title_ids
    return False
