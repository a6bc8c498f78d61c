"""HTML → Markdown, shared by the DOCX (via mammoth) and HTML converters.

markdownify does the inline and block work; before it, the tree is tidied so that tables get a header
row, footnotes become Markdown footnotes (`[^1]` … `[^1]: text`), images keep only a reference (never
a data: URI) and alt text fits on one line."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, NavigableString, Tag
from markdownify import MarkdownConverter

_FOOTNOTE_ID = re.compile(r"^(footnote|endnote)-(\d+)$")
_FOOTREF = re.compile(r"^#(footnote|endnote)-(\d+)$")


class _Converter(MarkdownConverter):
    def convert_img(self, el, text, parent_tags):  # type: ignore[no-untyped-def]
        src = el.get("src") or ""
        if src.startswith("data:"):
            src = ""
        alt = " ".join((el.get("alt") or "").split()).replace("]", ")").replace("[", "(")
        return f"![{alt}]({src})"


def _md(soup: BeautifulSoup | Tag) -> str:
    return _Converter(heading_style="ATX", bullets="-", strong_em_symbol="*", escape_misc=False).convert_soup(
        soup
    )


def _header_rows(soup: BeautifulSoup) -> None:
    for table in soup.find_all("table"):
        if table.find("th"):
            continue
        first = table.find("tr")
        if first is None:
            continue
        for td in first.find_all("td", recursive=False):
            td.name = "th"


def _flatten_cells(soup: BeautifulSoup) -> None:
    """Table cells hold one line in Markdown: paragraphs and breaks inside a cell become spaces."""
    for cell in soup.find_all(["td", "th"]):
        for br in cell.find_all("br"):
            br.replace_with(" ")
        for block in cell.find_all(["p", "div"]):
            block.insert_after(" ")
            block.unwrap()


def _footnotes(soup: BeautifulSoup) -> list[str]:
    notes: list[tuple[str, str]] = []
    for li in soup.find_all("li", id=_FOOTNOTE_ID):
        kind, num = _FOOTNOTE_ID.match(li["id"]).groups()  # type: ignore[union-attr]
        label = num if kind == "footnote" else f"e{num}"
        for back in li.find_all("a", href=re.compile(r"^#(footnote|endnote)-ref-")):
            back.decompose()
        text = " ".join(_md(BeautifulSoup(li.decode_contents(), "html.parser")).split())
        notes.append((label, text))
        parent = li.parent
        li.decompose()
        if parent is not None and parent.name in ("ol", "ul") and not parent.find("li"):
            parent.decompose()
    for a in soup.find_all("a", href=_FOOTREF):
        kind, num = _FOOTREF.match(a["href"]).groups()  # type: ignore[union-attr]
        label = num if kind == "footnote" else f"e{num}"
        target = a.parent if a.parent is not None and a.parent.name == "sup" else a
        target.replace_with(NavigableString(f"CONCORDFNREF{label}X"))
    return [f"[^{label}]: {text}" for label, text in notes]


def to_markdown(html: str | BeautifulSoup | Tag) -> str:
    soup = html if not isinstance(html, str) else BeautifulSoup(html, "html.parser")
    for el in soup.find_all(["script", "style", "noscript", "template"]):
        el.decompose()
    notes = _footnotes(soup)  # type: ignore[arg-type]
    _header_rows(soup)  # type: ignore[arg-type]
    _flatten_cells(soup)  # type: ignore[arg-type]
    md = _md(soup)
    md = re.sub(r"CONCORDFNREF(\w+?)X", r"[^\1]", md)
    md = re.sub(r"[ \t]+\n", "\n", md)
    md = re.sub(r"\n{3,}", "\n\n", md).strip()
    if notes:
        md += "\n\n" + "\n".join(notes)
    return md + "\n" if md else ""
