"""HTML → Markdown, shared by the DOCX (via mammoth) and HTML converters.

markdownify does the inline and block work; before it, the tree is tidied so that tables get a header
row, footnotes become Markdown footnotes (`[^1]` … `[^1]: text`), images keep only a reference (never
a data: URI, which is summarised; a local file keeps its name) and alt text fits on one line."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, Tag
from bs4.element import NavigableString
from markdownify import MarkdownConverter

_FOOTNOTE_ID = re.compile(r"^(footnote|endnote)-(\d+)$")
_FOOTREF = re.compile(r"^#(footnote|endnote)-(\d+)$")


def attr(tag: Tag, name: str) -> str:
    """A single-valued attribute's text ("" when absent). bs4 types every attribute as possibly
    multi-valued (a list for class, rel…), so the list case joins its values as the HTML had them."""
    value = tag.get(name)
    return value if isinstance(value, str) else " ".join(value or [])


_DATA_URI = re.compile(r"^data:([\w.+-]+/[\w.+-]+)?[^,]*,", re.I)


def image_target(el: Tag) -> tuple[str, str]:
    """(target, note) of an <img>: its src (or a lazy-loading data-src, or srcset's first candidate); a
    local file keeps only its name (never the path of the machine it was written on); a data: URI is not
    copied (it can be megabytes) but summarised in the note."""
    src = attr(el, "src").strip() or attr(el, "data-src").strip()
    if not src:
        srcset = attr(el, "srcset").strip()
        src = srcset.split(",")[0].split()[0] if srcset else ""
    data = _DATA_URI.match(src)
    if data:
        kind = (data.group(1) or "image").split("/")[-1].split("+")[0].upper()
        payload = src[data.end() :]
        base64 = ";base64" in src[: data.end()].lower()
        size = len(payload.rstrip("=")) * 3 // 4 if base64 else len(payload)
        amount = f"{size} bytes" if size < 1024 else f"{size / 1024:.1f} KB"
        return "", f"embedded {kind} image, {amount}"
    if src.lower().startswith("file:"):
        src = src.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    return src.replace(" ", "%20").replace(")", "%29").replace("(", "%28"), ""


class _Converter(MarkdownConverter):
    def convert_img(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        src, note = image_target(el)
        alt = " ".join((attr(el, "alt") or attr(el, "title")).split()).replace("]", ")").replace("[", "(")
        if note or not src:
            # An embedded image has no target to point at: say what it was rather than copy it; one with no
            # target at all (a DOCX picture linked to nothing) is named by its alt text, never `![alt]()`.
            return f"*(image: {', '.join(x for x in (alt, note) if x) or 'no source'})*"
        return f"![{alt}]({src})"


def _md(soup: Tag) -> str:
    return _Converter(heading_style="ATX", bullets="-", strong_em_symbol="*", escape_misc=False).convert_soup(
        soup
    )


def _header_rows(soup: Tag) -> None:
    for table in soup.find_all("table"):
        if table.find("th"):
            continue
        first = table.find("tr")
        if first is None:
            continue
        for td in first.find_all("td", recursive=False):
            td.name = "th"


def _flatten_cells(soup: Tag) -> None:
    """Table cells hold one line in Markdown: paragraphs and breaks inside a cell become spaces."""
    for cell in soup.find_all(["td", "th"]):
        for br in cell.find_all("br"):
            br.replace_with(" ")
        for block in cell.find_all(["p", "div"]):
            block.insert_after(" ")
            block.unwrap()


def _footnotes(soup: Tag) -> list[str]:
    notes: list[tuple[str, str]] = []
    for li in soup.find_all("li", id=_FOOTNOTE_ID):
        found = _FOOTNOTE_ID.match(attr(li, "id"))
        if found is None:
            continue
        kind, num = found.groups()
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
        found = _FOOTREF.match(attr(a, "href"))
        if found is None:
            continue
        kind, num = found.groups()
        label = num if kind == "footnote" else f"e{num}"
        target = a.parent if a.parent is not None and a.parent.name == "sup" else a
        target.replace_with(NavigableString(f"CONCORDFNREF{label}X"))
    return [f"[^{label}]: {text}" for label, text in notes]


def to_markdown(html: str | Tag) -> str:
    soup = html if not isinstance(html, str) else BeautifulSoup(html, "html.parser")
    for el in soup.find_all(["script", "style", "noscript", "template"]):
        el.decompose()
    notes = _footnotes(soup)
    _header_rows(soup)
    _flatten_cells(soup)
    md = _md(soup)
    md = re.sub(r"CONCORDFNREF(\w+?)X", r"[^\1]", md)
    md = re.sub(r"[ \t]+\n", "\n", md)
    md = re.sub(r"\n{3,}", "\n\n", md).strip()
    if notes:
        md += "\n\n" + "\n".join(notes)
    return md + "\n" if md else ""
