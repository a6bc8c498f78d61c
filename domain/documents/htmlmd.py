"""HTML → Markdown, shared by the DOCX (via mammoth) and HTML converters.

markdownify does the inline and block work; before it, the tree is tidied so that tables get a header
row, footnotes become Markdown footnotes (`[^1]` … `[^1]: text`), images keep only a reference (never
a data: URI, which is summarised; a local file keeps its name) and alt text fits on one line.

Every page is parsed by `parse`, which keeps at most `MAX_DEPTH` levels of elements: markdownify walks the
tree recursively, and several steps here and in convert_html.py look at each element's whole subtree
(a link's text, a table's header cell, a cell's paragraphs), so an unbounded depth either exhausts the
recursion limit or costs the square of the depth. Tags nested deeper are left out as they are parsed
(their text is kept, a block's separated by a space), so a page's cost stays linear in its size."""

from __future__ import annotations

import re
from typing import Any

from bs4 import BeautifulSoup, Tag
from bs4.element import NavigableString
from markdownify import MarkdownConverter

MAX_DEPTH = 200
# Inline elements left out below the bound join their text to the words around them; any other leaves a
# space, so two blocks' words do not run together.
_INLINE = frozenset(
    "a abbr b bdi bdo cite code data dfn em i kbd mark q s samp small span strong sub sup time u var".split()
)

_FOOTNOTE_ID = re.compile(r"^(footnote|endnote)-(\d+)$")
_FOOTREF = re.compile(r"^#(footnote|endnote)-(\d+)$")


class _Bounded(BeautifulSoup):
    """html.parser's tree with at most MAX_DEPTH levels of elements (see the module)."""

    def __init__(self, markup: str | bytes) -> None:
        self._skipped: dict[str, int] = {}  # open tags left out, by name
        super().__init__(markup, "html.parser")

    def handle_starttag(
        self, name: str, namespace: Any, nsprefix: Any, attrs: Any, *args: Any, **kw: Any
    ) -> Any:
        if len(self.tagStack) <= MAX_DEPTH:  # the stack holds the document itself too
            return super().handle_starttag(name, namespace, nsprefix, attrs, *args, **kw)
        self._space(name)
        if not self.builder.can_be_empty_element(name):
            self._skipped[name] = self._skipped.get(name, 0) + 1
        return None  # as if the tag were not there: no end tag is expected of an empty element

    def handle_endtag(self, name: str, nsprefix: str | None = None) -> None:
        if self._skipped.get(name):  # the innermost open one of that name is one left out
            self._skipped[name] -= 1
            self._space(name)
            return
        super().handle_endtag(name, nsprefix)

    def _space(self, name: str) -> None:
        """A block left out leaves one space between the words around it (never a run of them)."""
        if name not in _INLINE and not (self.current_data and self.current_data[-1].endswith(" ")):
            self.handle_data(" ")


def parse(markup: str | bytes) -> BeautifulSoup:
    """An HTML page or fragment as a tree of at most MAX_DEPTH levels."""
    return _Bounded(markup)


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
        text = " ".join(_md(parse(li.decode_contents())).split())
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


_BOX = re.compile(r"CONCORDBOX([01])X")
# A checkbox that starts a paragraph or list item makes it a task item (`- [x] Done`); elsewhere (in a
# table cell, mid-sentence) it is written `[x]` / `[ ]` where it stands.
_BOX_ITEM = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>[-*+] |\d+[.)] )?CONCORDBOX(?P<on>[01])X[ \t]*", re.M)


def _checkboxes(soup: Tag) -> None:
    """Form checkboxes (a DOCX's content-control and legacy checkboxes, as mammoth gives them) as marks."""
    for box in soup.find_all("input"):
        if attr(box, "type").lower() == "checkbox":
            box.replace_with(NavigableString(f"CONCORDBOX{1 if box.has_attr('checked') else 0}X"))


def _task_items(md: str) -> str:
    def item(found: re.Match[str]) -> str:
        return f"{found['indent']}{found['marker'] or '- '}[{'x' if found['on'] == '1' else ' '}] "

    md = _BOX_ITEM.sub(item, md)
    return _BOX.sub(lambda found: "[x]" if found[1] == "1" else "[ ]", md)


def to_markdown(html: str | Tag) -> str:
    soup = html if not isinstance(html, str) else parse(html)
    for el in soup.find_all(["script", "style", "noscript", "template"]):
        el.decompose()
    _checkboxes(soup)
    notes = _footnotes(soup)
    _header_rows(soup)
    _flatten_cells(soup)
    md = _md(soup)
    md = re.sub(r"CONCORDFNREF(\w+?)X", r"[^\1]", md)
    md = _task_items(md)
    # Trailing blanks off each line (a regex `[ \t]+\n` costs the square of a long run of blanks).
    md = "\n".join(line.rstrip(" \t") for line in md.split("\n"))
    md = re.sub(r"\n{3,}", "\n\n", md).strip()
    if notes:
        md += "\n\n" + "\n".join(notes)
    return md + "\n" if md else ""
