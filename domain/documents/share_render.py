"""The document as HTML for the share page: rendered off the event loop, a page at a time for large
documents, and cached per document version.

markdown-it renders with raw HTML off (any HTML in the Markdown is escaped); headings carry their section
ids so the section tree links to them; characters XML and HTML have no place for are shown as visible
ones (xmltext.safe, one character for one so line numbers stay). A document whose Markdown is at most
`PAGE_CHARS` characters is one page, rendered whole as it always was. A larger one is cut into pages at
section boundaries, each about `PAGE_CHARS` (a single larger section is a page of its own), so a 15 MB
document is read sixty pages of 256 KB rather than one 9 MB page. A page is rendered on its own with the
whole document's link reference definitions, in the offload pool when it is large.

The cache holds rendered pages and page plans keyed by the document and its version (its text changes
only with a new version, which is a new key: nothing is ever stale; a cached page is served without
reading the text), least recently used first out, within
`CACHE_CHARS` characters of HTML per process."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt
from mdit_py_plugins.footnote import footnote_plugin

from domain.consensus import sections
from domain.documents import offload, xmltext
from domain.kernel.errors import NotFound

PAGE_CHARS = 256 * 1024
CACHE_CHARS = 32 * 1024 * 1024
# The text of the documents being read page by page, per process (a reader going through the 70 pages of a
# new version would otherwise load the whole row 70 times, each time decoding megabytes on the event loop).
TEXT_CHARS = 64 * 1024 * 1024

# Footnotes (`[^1]` and their `[^1]: text` definitions, as a DOCX's footnotes convert) render as numbered
# references to a list at the end of the page that holds them.
_md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").use(footnote_plugin)


def render(markdown: str, ids: dict[int, str], references: dict[str, Any] | None = None) -> str:
    """HTML of `markdown`; a top-level heading starting on line n (of this text) gets the id `ids[n]`."""
    env: dict[str, Any] = {"references": dict(references)} if references else {}
    tokens = _md.parse(xmltext.safe(markdown), env)
    for tok in tokens:
        if tok.type == "heading_open" and tok.map and tok.level == 0 and tok.map[0] in ids:
            tok.attrSet("id", ids[tok.map[0]])
    return str(_md.renderer.render(tokens, _md.options, env))


def render_whole(markdown: str) -> str:
    """The whole document as one page."""
    return render(markdown, {s.heading_start: s.id for s in sections.parse(markdown) if s.heading_level})


@dataclass(frozen=True)
class Page:
    first_line: int
    start: int  # characters of the document's Markdown
    end: int
    section_ids: tuple[str, ...]


def plan(markdown: str) -> list[Page]:
    """The document's pages: consecutive runs of whole sections of about PAGE_CHARS characters."""
    found = sections.parse(markdown)
    if len(markdown) <= PAGE_CHARS or not found:
        return [Page(0, 0, len(markdown), tuple(s.id for s in found))]
    pages: list[Page] = []
    first_line, start = 0, 0
    ids: list[str] = []
    for n, sec in enumerate(found):
        begin = 0 if n == 0 else found[n - 1].body_to  # a section runs from its heading to the next one
        if ids and sec.body_to - start > PAGE_CHARS:
            pages.append(Page(first_line, start, begin, tuple(ids)))
            first_line, start, ids = sec.heading_start, begin, []
        ids.append(sec.id)
    pages.append(Page(first_line, start, len(markdown), tuple(ids)))
    return pages


def _render_part(text: str, ids: dict[int, str], references: dict[str, Any]) -> str:
    """What the pool runs: one page's text, its heading ids, the document's references."""
    return render(text, ids, references)


@dataclass(frozen=True)
class Rendered:
    html: str
    number: int  # from 1
    count: int
    page_of: dict[str, int]  # section id → its page number
    key: Any  # the document version's cache key (see `memo`)


class _Cache:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.items: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self.lock:
            found = self.items.get(key)
            if found is None:
                return None
            self.items.move_to_end(key)
            return found[0]

    def put(self, key: Any, value: Any, size: int) -> None:
        with self.lock:
            if key in self.items:
                self.size -= self.items.pop(key)[1]
            self.items[key] = (value, size)
            self.size += size
            while self.size > self.limit and len(self.items) > 1:
                _, (_, dropped) = self.items.popitem(last=False)
                self.size -= dropped

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.size = 0


_cache = _Cache(CACHE_CHARS)
_texts = _Cache(TEXT_CHARS)


async def _text_of(key: Any, markdown: Callable[[], Awaitable[str]]) -> str:
    """The version's text: kept while its pages are being rendered when it is more than one page."""
    found = _texts.get(key)
    if found is None:
        found = await markdown()
        if len(found) > PAGE_CHARS:
            _texts.put(key, found, len(found))
    return str(found)


async def page(
    document_id: str, version: int, markdown: Callable[[], Awaitable[str]], number: int
) -> Rendered:
    """Page `number` (from 1) of the document's HTML; 404 past its last page. `markdown()` gives the
    document's text; it is asked only when this version's page is not cached yet."""
    # A document's text changes only with its version (its conversion sets version 1, each merge bumps
    # it): the version names the text, so a cached page is served without reading the text at all.
    key = (document_id, version)
    pages_of = _cache.get((key, "plan"))
    text: str | None = None
    if pages_of is None:
        text = await _text_of(key, markdown)
        await offload.outline(text)  # sections known: the plan and ids cost no parse
        pages = plan(text)
        page_of = {sid: n for n, p in enumerate(pages, 1) for sid in p.section_ids}
        pages_of = (pages, page_of)
        _cache.put((key, "plan"), pages_of, 64 * len(page_of) + 64)
    pages, page_of = pages_of
    if not 1 <= number <= len(pages):
        raise NotFound(
            f"page {number} does not exist: the document has {len(pages)} page(s)", code="page_not_found"
        )
    html = _cache.get((key, number))
    if html is None:
        html = await _html(key, text if text is not None else await _text_of(key, markdown), pages, number)
        _cache.put((key, number), html, len(html))
    return Rendered(html, number, len(pages), page_of, key)


_MEDIA = re.compile(r"\]\(media/([^)\s]+)\)")


async def media_names(
    document_id: str, version: int, markdown: Callable[[], Awaitable[str]]
) -> frozenset[str]:
    """The pictures the version's text shows (`![…](media/NAME)`): what a share link may serve of the
    uploaded package. A picture an edit took out stays in the package but is not shown, so not served."""
    key = ((document_id, version), "media")
    names = _cache.get(key)
    if names is None:
        names = frozenset(_MEDIA.findall(await markdown()))
        _cache.put(key, names, 64 * len(names) + 64)
    return frozenset(names)


def memoized(key: Any, *names: str) -> bool:
    """Whether every one of `names` is kept for the document version `key`."""
    return all(_cache.get((key, name)) is not None for name in names)


def memo(key: Any, name: str, build: Callable[[], str]) -> str:
    """`build()`, kept with the document version `key`'s pages (a part of the page that is the same on
    every page of a version: the section tree of a document of thousands of sections, say)."""
    found = _cache.get((key, name))
    if found is None:
        found = build()
        _cache.put((key, name), found, len(found))
    return str(found)


async def _html(key: Any, markdown: str, pages: list[Page], number: int) -> str:
    if len(pages) == 1 and len(markdown) <= sections.LARGE:
        return render_whole(markdown)
    await offload.outline(markdown)
    references = sections.outline_of(markdown).references
    one = pages[number - 1]
    on_page = set(one.section_ids)
    ids = {
        s.heading_start - one.first_line: s.id
        for s in sections.parse(markdown)
        if s.heading_level and s.id in on_page
    }
    text = markdown[one.start : one.end]
    if len(text) <= sections.LARGE:
        return render(text, ids, references)
    result: str = await offload.shared(("page", key, number), _render_part, text, ids, references)
    return result
