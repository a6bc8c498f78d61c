"""Converter details beyond the shared fixtures: HTML main content, nested lists, outline levels."""

from __future__ import annotations

import io
import zipfile

import docx
import pytest
from docx.oxml import OxmlElement
from docx.oxml.ns import qn

from domain.documents import convert_docx, convert_html


def test_html_keeps_main_content_lists_tables_and_links():
    html = b"""<!doctype html><html><head><title>T</title><script>var x=1</script></head><body>
    <nav><a href="/home">Home</a></nav>
    <main><h1>Guide</h1><p>See <a href="https://example.com/a">the docs</a>.</p>
    <ol><li>one<ul><li>inner</li></ul></li><li>two</li></ol>
    <table><thead><tr><th>Name</th><th>Qty</th></tr></thead><tbody><tr><td>Pens</td><td>3</td></tr></tbody></table>
    <img src="data:image/png;base64,AAAA" alt="pic"><img alt="Org chart"><img src=""></main>
    <footer>Copyright</footer></body></html>"""
    md = convert_html.convert(html)
    assert md.startswith("# Guide")
    assert "[the docs](https://example.com/a)" in md
    assert "1. one" in md
    assert "    - inner" in md or "   - inner" in md
    assert "2. two" in md
    assert "| Name | Qty |" in md
    assert "| Pens | 3 |" in md
    assert "Home" not in md
    assert "Copyright" not in md
    assert "var x" not in md
    assert "base64" not in md
    # An embedded image is summarised, not copied nor left as an empty link.
    assert "*(image: pic, embedded PNG image, 3 bytes)*" in md
    assert "![pic]()" not in md
    # One with no target at all is named by its alt text (or said to have no source), never `![…]()`.
    assert "*(image: Org chart)*" in md
    assert "*(image: no source)*" in md
    assert "]()" not in md


def test_docx_outline_level_paragraphs_and_hyperlinks_become_markdown():
    word = docx.Document()
    para = word.add_paragraph("Custom heading")
    ppr = para._p.get_or_add_pPr()
    lvl = OxmlElement("w:outlineLvl")
    lvl.set(qn("w:val"), "1")
    ppr.append(lvl)  # type: ignore[arg-type]  # types-lxml types children by the parent's class; OOXML mixes them
    word.add_heading("Real heading", level=1)
    word.add_paragraph("Body text.")
    out = io.BytesIO()
    word.save(out)
    md = convert_docx.convert(out.getvalue())
    assert "## Custom heading" in md
    assert "# Real heading" in md
    assert "Body text." in md


def test_docx_with_xml_comments_still_converts():
    """A comment's tag in lxml is a function, not a name: it must be skipped, not fail the conversion."""
    word = docx.Document()
    word.add_heading("Commented", level=1)
    word.add_paragraph("Body text.")
    out = io.BytesIO()
    word.save(out)
    commented = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(out.getvalue())) as src, zipfile.ZipFile(commented, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name in ("word/document.xml", "word/styles.xml"):
                data = data.replace(b"?>", b"?><!-- a comment -->", 1).replace(
                    b"<w:body>", b"<w:body><!-- x -->"
                )
            dst.writestr(name, data)
    md = convert_docx.convert(commented.getvalue())
    assert "# Commented" in md
    assert "Body text." in md


_NESTING = {
    "div": ("<div>", "</div>"),
    "link": ("<a href='#x'>", "</a>"),
    "article": ("<article>", "</article>"),
    "table": ("<table><tr><td>", "</td></tr></table>"),
    "list": ("<ul><li>", "</li></ul>"),
    "quote": ("<blockquote>", "</blockquote>"),
}


@pytest.mark.parametrize("kind", sorted(_NESTING))
def test_html_nested_tens_of_thousands_deep_converts_with_its_text(kind):
    """Nesting past what the converter walks (htmlmd.MAX_DEPTH) no longer fails the document with
    "nested too deeply", nor does its cost grow with the square of the depth: the tags beyond the bound
    are left out and their text is kept."""
    start, end = _NESTING[kind]
    depth = 20_000
    page = f"<html><body><main><h1>Deep {kind}</h1><p>Before.</p>{start * depth}Innermost words{end * depth}"
    md = convert_html.convert((page + "<p>After.</p></main></body></html>").encode())
    assert md.startswith(f"# Deep {kind}")
    assert "Before." in md
    assert "Innermost words" in md
    assert "After." in md


def test_html_nested_within_the_bound_keeps_its_structure():
    depth = 40
    page = "<html><body><main>" + "<ul><li>level" * depth + "</li></ul>" * depth + "</main></body></html>"
    md = convert_html.convert(page.encode())
    items = [line for line in md.splitlines() if line.strip().startswith("- level")]
    assert len(items) == depth
    # Each level is indented further than the one before it.
    indents = [len(line) - len(line.lstrip()) for line in items]
    assert indents == sorted(indents)
    assert len(set(indents)) == depth
