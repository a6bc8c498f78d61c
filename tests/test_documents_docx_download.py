"""The DOCX download over HTTP: an uploaded Word file comes back as itself, with merged section changes
applied to it (images, Title, headers, footers, footnotes and untouched sections' XML kept); other uploads
come back built from their Markdown in real Word styles, lists, tables and footnotes."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import docx
from docx.oxml.ns import qn
from lxml import etree
from sqlalchemy import update

from tests.documents_support import content, fixture_path, make_key, upload_ready

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


async def _team(docs: Any, runtime: Any, data: bytes, filename: str) -> tuple[list[dict], dict, str]:
    """An editor and two reviewers on a freshly converted upload."""
    keys = [await make_key(runtime, org="Acme", name=f"k{i}") for i in range(3)]
    doc = await upload_ready(docs, keys[0], data, filename)
    base = f"/api/tap/{doc['id']}"
    for i, (key, role) in enumerate(zip(keys, ("editor", "reviewer", "reviewer"), strict=True)):
        resp = await docs.post(
            f"{base}/join", headers=key["headers"], json={"agentName": f"agent{i}", "role": role}
        )
        assert resp.status == 201, await resp.text()
    return keys, doc, base


async def _merge(docs: Any, keys: list[dict], base: str, section: str, text: str) -> None:
    resp = await docs.post(
        f"{base}/proposals",
        headers=keys[0]["headers"],
        json={"sectionId": section, "content": text, "summary": "rewrite"},
    )
    assert resp.status == 201, await resp.text()
    proposal = (await resp.json())["proposalId"]
    for key in keys[1:]:
        resp = await docs.post(f"{base}/proposals/{proposal}/approve", headers=key["headers"])
        assert resp.status == 200, await resp.text()
    assert (await resp.json())["status"] == "approved"


async def _download(docs: Any, key: dict, doc_id: str) -> bytes:
    resp = await docs.get(f"/api/documents/{doc_id}/download", headers=key["headers"])
    assert resp.status == 200, await resp.text()
    assert resp.headers["Content-Type"].startswith(DOCX)
    return await resp.read()


def _blocks(data: bytes) -> list[bytes]:
    """The body's blocks as XML, parsed the way python-docx parses them."""
    body = docx.Document(io.BytesIO(data)).element.body
    return [etree.tostring(b) for b in body if isinstance(b.tag, str) and b.tag != qn("w:sectPr")]


def _index(blocks: list[bytes], text: str) -> int:
    return next(n for n, b in enumerate(blocks) if text.encode() in b)


def _media(data: bytes) -> list[str]:
    return sorted(n for n in zipfile.ZipFile(io.BytesIO(data)).namelist() if n.startswith("word/media/"))


async def test_an_uploaded_docx_comes_back_as_itself_with_a_merged_section_applied(docs, runtime):
    original = fixture_path("markitdown-test.docx").read_bytes()
    keys, doc, base = await _team(docs, runtime, original, "markitdown-test.docx")
    # Nothing merged yet: the very file uploaded.
    assert await _download(docs, keys[0], doc["id"]) == original

    await _merge(
        docs,
        keys,
        base,
        "sec:abstract",
        "A **rewritten** abstract.\n\n- first point\n- second point\n\n| Agent | Role |\n| --- | --- |\n"
        "| A | writes |\n\n## Added part\n\nA heading the change added.",
    )
    data = await _download(docs, keys[0], doc["id"])
    word = docx.Document(io.BytesIO(data))
    first = word.paragraphs[0]
    assert first.style is not None
    assert first.style.name == "Title"
    assert first.text.startswith("AutoGen: Enabling Next-Gen LLM Applications")
    # The image is still there, placed as it was, and the package keeps its media.
    assert len(word.inline_shapes) == len(docx.Document(io.BytesIO(original)).inline_shapes) == 1
    assert _media(data) == _media(original) == ["word/media/image1.png"]
    assert len(data) > 100_000  # not a 38 KB rebuild
    styles = [(p.style.name if p.style else None, p.text) for p in word.paragraphs]
    assert ("Heading 1", "Abstract") in styles
    assert (None, "A rewritten abstract.") in [(None, t) for _, t in styles]
    assert ("List Bullet", "first point") in styles
    assert ("List Bullet", "second point") in styles
    assert ("Heading 2", "Added part") in styles  # the style of the document's own level-2 headings
    text = "\n".join(t for _, t in styles)
    assert "AutoGen is an open-source framework" not in text
    # The untouched sections are the original's XML, element for element.
    old, new = _blocks(original), _blocks(data)
    head = _index(old, ">Abstract<")
    assert new[: head + 1] == old[: head + 1]
    intro_old, intro_new = _index(old, ">Introduction<"), _index(new, ">Introduction<")
    assert new[intro_new:] == old[intro_old:]
    added = new[head + 1 : intro_new]
    assert any(b"first point" in b for b in added)
    assert any(b"<w:tbl>" in b or b"<w:tbl " in b for b in added)
    # The Markdown of the download is the document's Markdown again.
    again = await upload_ready(docs, keys[0], data, "again.docx")
    md = await content(docs, keys[0], again["id"])
    assert "# Abstract\n\nA **rewritten** abstract.\n\n- first point\n- second point" in md
    assert "| Agent | Role |" in md
    assert "](media/image1.png)" in md


def _with_header_footer_headings(data: bytes) -> bytes:
    """mammoth's footnotes fixture with a header, a footer and two headings (outline-level paragraphs,
    as Word writes a heading without a heading style) around its text."""
    word = docx.Document(io.BytesIO(data))
    section = word.sections[0]
    section.header.is_linked_to_previous = False
    section.header.paragraphs[0].text = "Concord header"
    section.footer.is_linked_to_previous = False
    section.footer.paragraphs[0].text = "Concord footer"
    body = word.element.body

    def heading(text: str) -> Any:
        para = body.makeelement(qn("w:p"), {})
        ppr = etree.SubElement(para, qn("w:pPr"))
        etree.SubElement(ppr, qn("w:outlineLvl")).set(qn("w:val"), "0")
        etree.SubElement(etree.SubElement(para, qn("w:r")), qn("w:t")).text = text
        return para

    first = word.paragraphs[0]._p
    first.addprevious(heading("Opening"))
    closing = word.add_paragraph("Old closing text.")._p
    closing.addprevious(heading("Closing"))
    out = io.BytesIO()
    word.save(out)
    return out.getvalue()


def _notes(data: bytes) -> dict[str, str]:
    xml = zipfile.ZipFile(io.BytesIO(data)).read("word/footnotes.xml")
    root = etree.fromstring(xml)
    w = {"w": "http://schemas.openxmlformats.org/wordprocessingml/2006/main"}
    return {
        str(note.get(qn("w:id"))): "".join(note.xpath(".//w:t/text()", namespaces=w)).strip()
        for note in root.xpath("./w:footnote[not(@w:type)]", namespaces=w)
    }


async def test_headers_footers_and_footnotes_survive_and_a_changed_section_gets_a_real_footnote(
    docs, runtime
):
    original = _with_header_footer_headings(fixture_path("mammoth-footnotes.docx").read_bytes())
    keys, doc, base = await _team(docs, runtime, original, "notes.docx")
    md = await content(docs, keys[0], doc["id"])
    assert md.startswith("# Opening\n\nOuch[^1].[^2]\n\n# Closing\n\nOld closing text.\n\n[^1]:")
    await _merge(
        docs,
        keys,
        base,
        "sec:closing",
        "New closing text with a note[^3] and an old one[^2].\n\n"
        "[^1]: A tachyon walks into a bar.\n[^2]: Fin.\n[^3]: A note of its own.",
    )
    data = await _download(docs, keys[0], doc["id"])
    word = docx.Document(io.BytesIO(data))
    assert word.sections[0].header.paragraphs[0].text == "Concord header"
    assert word.sections[0].footer.paragraphs[0].text == "Concord footer"
    texts = [p.text for p in word.paragraphs]
    assert "Old closing text." not in texts
    assert "New closing text with a note and an old one." in texts
    # The original's notes are kept; the new one is a real footnote of its own, referenced in the text.
    assert _notes(data) == {"1": "A tachyon walks into a bar.", "2": "Fin.", "3": "A note of its own."}
    refs = word.element.body.xpath(".//w:footnoteReference/@w:id")
    assert refs == ["1", "2", "3", "2"]
    old, new = _blocks(original), _blocks(data)
    closing = _index(old, ">Closing<")
    assert new[: closing + 1] == old[: closing + 1]
    # Converted again, every note is its own line.
    again = await upload_ready(docs, keys[0], data, "again.docx")
    md = await content(docs, keys[0], again["id"])
    assert md.endswith(
        "New closing text with a note[^3] and an old one[^2].\n\n"
        "[^1]: A tachyon walks into a bar.\n[^2]: Fin.\n[^3]: A note of its own.\n"
    )


async def test_a_docx_without_a_source_map_is_rebuilt_inside_its_own_package(docs, runtime):
    """A document converted before source maps were kept: its body is built from the Markdown, in the
    original package (Title, styles, media embedded again from the package)."""
    from domain.documents.models import Document

    original = fixture_path("markitdown-test.docx").read_bytes()
    keys, doc, base = await _team(docs, runtime, original, "markitdown-test.docx")
    async with runtime.db.transaction() as session:
        await session.execute(update(Document).where(Document.id == doc["id"]).values(source_map=None))
    await _merge(docs, keys, base, "sec:abstract", "Short abstract.")
    word = docx.Document(io.BytesIO(await _download(docs, keys[0], doc["id"])))
    styles = [(p.style.name if p.style else None, p.text) for p in word.paragraphs]
    assert styles[0][0] == "Title"
    assert ("Heading 1", "Abstract") in styles
    assert ("Normal", "Short abstract.") in styles
    assert len(word.inline_shapes) == 1


async def test_a_markdown_upload_downloads_with_word_styles_lists_tables_and_footnotes(docs, runtime):
    key = await make_key(runtime)
    md = (
        "# Report\n\nIntro with a note[^a] and $x_{1} + \\frac{a}{b}$.\n\n"
        "## Steps\n\n1. mix\n2. bake\n   - slowly\n\n"
        "Then:\n\n1. cool\n2. serve\n\n- salt\n- pepper\n\n> A quote.\n\n"
        "| Item | Cost |\n| --- | --- |\n| Flour | 3 |\n\n## Notes\n\nAnother[^b].\n\n"
        "[^a]: The first note.\n[^b]: The second note, with *emphasis*.\n"
    )
    doc = await upload_ready(docs, key, md.encode(), "report.md")
    data = await _download(docs, key, doc["id"])
    word = docx.Document(io.BytesIO(data))
    paras = [(p.style.name if p.style else None, p.text, p) for p in word.paragraphs]
    styles = [(s, t) for s, t, _ in paras]
    assert ("Heading 1", "Report") in styles
    assert ("Heading 2", "Steps") in styles
    assert ("List Number", "mix") in styles
    assert ("List Bullet 2", "slowly") in styles
    assert ("List Bullet", "salt") in styles
    assert ("Quote", "A quote.") in styles
    assert ("Normal", "Intro with a note and $x_{1} + \\frac{a}{b}$.") in styles

    def num_id(text: str) -> int:
        para: Any = next(p for _, t, p in paras if t == text)
        return int(para._p.pPr.numPr.numId.val)

    # Real Word numbering; a new numbered list starts again at 1 (a numbering instance of its own).
    assert num_id("mix") == num_id("bake") != num_id("cool") == num_id("serve")
    assert num_id("slowly") not in (num_id("mix"), num_id("salt"))
    table = word.tables[0]
    assert [c.text for c in table.rows[1].cells] == ["Flour", "3"]
    assert table.style is not None
    assert table.style.name == "Table Grid"
    assert _notes(data) == {"1": "The first note.", "2": "The second note, with emphasis."}
    # Back through the converter: the notes come back one per line, the lists as lists.
    again = await upload_ready(docs, key, data, "report.docx")
    md2 = await content(docs, key, again["id"])
    assert "[^1]: The first note.\n[^2]: The second note, with *emphasis*." in md2
    assert "1. mix\n2. bake" in md2
    assert "| Flour | 3 |" in md2
    assert "Intro with a note[^1] and $x_{1} + \\frac{a}{b}$." in md2  # LaTeX as text, not escaped


async def test_a_changed_section_that_ended_a_word_section_keeps_the_break_and_its_headers(docs, runtime):
    word = docx.Document()
    word.add_heading("Part one", 1)
    word.add_paragraph("First words.")
    word.add_section()
    word.add_heading("Part two", 1)
    word.add_paragraph("Second words.")
    for n, section in enumerate(word.sections):
        section.header.is_linked_to_previous = False
        section.header.paragraphs[0].text = f"Header {n + 1}"
    out = io.BytesIO()
    word.save(out)
    keys, doc, base = await _team(docs, runtime, out.getvalue(), "parts.docx")
    await _merge(docs, keys, base, "sec:part-one", "New first words.")
    got = docx.Document(io.BytesIO(await _download(docs, keys[0], doc["id"])))
    assert [s.header.paragraphs[0].text for s in got.sections] == ["Header 1", "Header 2"]
    texts = [p.text for p in got.paragraphs if p.text]
    assert texts == ["Part one", "New first words.", "Part two", "Second words."]
