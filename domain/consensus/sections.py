"""Markdown sections: headings become a tree of stable ids (`sec:budget:line-items`).

Parsing uses markdown-it (CommonMark), so headings inside code fences or setext headings are handled
as a Markdown reader would. A section's body is its text up to the next heading of any level.

Lines are Markdown's: they end at a newline, a CR LF or a CR, as markdown-it counts them (its token maps
are line numbers). `str.splitlines` also ends lines at U+000B, U+000C, U+001C-U+001E, U+0085, U+2028 and
U+2029, which would put every section after such a character on the wrong lines.

**Parsing once.** Parsing costs about half a second per megabyte (a millisecond for a topic of three
or four kilobytes), so what a text's parse says (its `Outline`: headings, line count, the character
offsets of the lines sections start and end at; never the text) is kept per text: small texts in an LRU
keyed by the text, large ones (over `LARGE` characters) by their length and hash, so the text itself is
not kept alive by the cache. `outline` is a pure function of the text, so a caller may compute it
elsewhere (domain/documents/offload.py does, in a process pool, off the event loop) and `remember` it.
`replace_body` derives the new text's outline from the old one when it can prove the parse of the rest is
unchanged (`_splice`), for any text of `SPLICE_FROM` characters or more: a merge into a 15 MB document
does not parse 15 MB again, and the next proposal on a topic just merged (its section looked up in the
new text) parses only what the merge wrote, about a third of a full parse for a topic of 3 KB.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt

ROOT_ID = "sec:_root"
MAX_SECTION_ID = 256
LARGE = 64 * 1024  # characters: a text above this is parsed off the event loop by callers that can
_md = MarkdownIt("commonmark")
_blocks = MarkdownIt("commonmark").disable("inline")  # headings' own text is parsed inline on its own
_LINE_END = re.compile(r"\r\n|\r|\n")
_LARGE_ENTRIES = 64
_SMALL_ENTRIES = 128
_SPLICE_LIMIT = 256 * 1024  # a replacement body longer than this is left to a full parse
# A shorter text is parsed when it is read rather than spliced when it is written: the splice parses the
# new body with the next heading and costs about as much as a full parse of a kilobyte or two, and the text
# may next be read by another web process, which parses it anyway.
SPLICE_FROM = 2 * 1024

Heading = tuple[int, int, int, str]  # level (1-6), first line, line after, text


def lines_of(text: str) -> list[str]:
    """The Markdown lines of `text` (see the module), as `str.splitlines` would give them otherwise: no
    empty line after a final line end."""
    lines = _LINE_END.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


@dataclass(frozen=True)
class Section:
    """One section of a text. Parsed sections are shared by every caller reading the same text (see
    `_parsed`), so they are frozen; `children` is filled while parsing only."""

    id: str
    title: str
    level: int  # effective depth: 1 for top-level, skipped levels collapse
    heading_level: int  # the level written in the Markdown (1-6); 0 for the root preamble
    heading_start: int  # first line of the heading
    body_start: int  # first line after the heading
    body_end: int  # line where the next heading starts (exclusive)
    body_from: int  # character offset of body_start in the text
    body_to: int  # character offset of body_end (the text's length at its end)
    parent: str | None = None
    children: list[Section] = field(default_factory=list)


@dataclass(frozen=True)
class Outline:
    """What parsing a text says about its sections, without the text (small, picklable)."""

    headings: tuple[Heading, ...]  # the top-level headings in order
    line_count: int
    length: int  # characters
    preamble: bool  # text before the first heading (the root section)
    offsets: dict[
        int, int
    ]  # line → character offset, for line 0 and every heading's first line and line after
    # Link reference definitions (label → href, title): they change how headings elsewhere read, and a
    # part of the text rendered on its own needs them.
    references: dict[str, Any]

    def offset(self, line: int) -> int:
        return self.length if line >= self.line_count else self.offsets[line]


_SPACES = re.compile(r"\s+")
_NOT_SLUG = re.compile(r"[^a-z0-9-]")
_DASHES = re.compile(r"-{2,}")


def slugify(text: str) -> str:
    s = text.lower().replace("_", " ")
    s = _SPACES.sub("-", s)
    s = _NOT_SLUG.sub("", s)
    s = _DASHES.sub("-", s).strip("-")
    return s or "section"


def _heading_text(inline: Any) -> str:
    parts: list[str] = []
    for child in inline.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts).strip() or inline.content.strip()


def _unique(base: str, taken: set[str]) -> str:
    """`base`, or `base-2`, `base-3`… in document order; a heading literally titled 'Summary 2' after
    two 'Summary' headings still gets an id of its own."""
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    taken.add(slug)
    return slug


def outline(markdown: str) -> Outline:
    """Parse `markdown` for its sections: the costly step (block structure for the whole text; inline
    parsing only of the headings, with the text's link references, exactly as a full parse reads them)."""
    env: dict[str, Any] = {}
    tokens = _blocks.parse(markdown, env)
    headings: list[Heading] = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map and tok.level == 0:
            inline = _md.parseInline(tokens[i + 1].content, env)[0]
            headings.append((int(tok.tag[1]), tok.map[0], tok.map[1], _heading_text(inline)))
    count = _line_count(markdown)
    wanted = {line for h in headings for line in h[1:3] if line < count}
    offsets = {0: 0} if count else {}
    line, last = 0, max(wanted, default=0)
    for found in _LINE_END.finditer(markdown):
        line += 1
        if line > last:
            break
        if line in wanted:
            offsets[line] = found.end()
    first = headings[0][1] if headings else count
    head_end = len(markdown) if first >= count else offsets[first]
    return Outline(
        headings=tuple(headings),
        line_count=count,
        length=len(markdown),
        preamble=bool(markdown[:head_end].strip()),
        offsets=offsets,
        references=dict(env.get("references") or {}),
    )


def _line_count(markdown: str) -> int:
    """len(lines_of(markdown)) without building the list."""
    ends = sum(1 for _ in _LINE_END.finditer(markdown))
    return ends if not markdown or markdown.endswith(("\n", "\r")) else ends + 1


Parsed = tuple[Outline, tuple[Section, ...], dict[str, Section]]


def _build(shape: Outline) -> Parsed:
    headings = shape.headings
    sections: list[Section] = []
    first = headings[0][1] if headings else shape.line_count
    if shape.preamble:
        sections.append(Section(ROOT_ID, "", 0, 0, 0, 0, first, 0, shape.offset(first)))
    stack: list[Section] = []  # open ancestors
    siblings: dict[str | None, set[str]] = {}  # slugs taken under each parent
    for n, (level, start, end, text) in enumerate(headings):
        while stack and stack[-1].heading_level >= level:
            stack.pop()
        parent = stack[-1] if stack else None
        slug = _unique(slugify(text), siblings.setdefault(parent.id if parent else None, set()))
        sid = f"{parent.id}:{slug}" if parent else f"sec:{slug}"
        body_end = headings[n + 1][1] if n + 1 < len(headings) else shape.line_count
        sec = Section(
            id=sid[:MAX_SECTION_ID],
            title=text,
            level=(parent.level + 1) if parent else 1,
            heading_level=level,
            heading_start=start,
            body_start=end,
            body_end=body_end,
            body_from=shape.offset(end),
            body_to=shape.offset(body_end),
            parent=parent.id if parent else None,
        )
        if parent:
            parent.children.append(sec)
        sections.append(sec)
        stack.append(sec)
    return shape, tuple(sections), {sec.id: sec for sec in reversed(sections)}


_small: OrderedDict[str, Parsed] = OrderedDict()
_large: OrderedDict[tuple[int, int], Parsed] = OrderedDict()
_lock = threading.Lock()  # downloads read sections in threads


def _key(markdown: str) -> tuple[int, int]:
    # str's hash is keyed per process (PYTHONHASHSEED), so no text can be made to collide on purpose.
    return len(markdown), hash(markdown)


def known(markdown: str) -> bool:
    """Whether the text's sections are at hand (reading them costs no parse), or cheap enough to parse
    where the caller is (a small text)."""
    if len(markdown) <= LARGE:
        return True
    with _lock:
        return _key(markdown) in _large


def _cache(markdown: str) -> tuple[OrderedDict[Any, Parsed], Any, int]:
    """The LRU that keeps the text's outline, its key there and the LRU's size."""
    if len(markdown) <= LARGE:
        return _small, markdown, _SMALL_ENTRIES
    return _large, _key(markdown), _LARGE_ENTRIES


def remember(markdown: str, shape: Outline) -> Parsed:
    """Keep `shape` (computed elsewhere by `outline(markdown)`) as the text's outline."""
    parsed = _build(shape)
    cache, key, size = _cache(markdown)
    with _lock:
        cache[key] = parsed
        cache.move_to_end(key)
        while len(cache) > size:
            cache.popitem(last=False)
    return parsed


def _parsed(markdown: str) -> Parsed:
    cache, key, _ = _cache(markdown)
    with _lock:
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
            return hit
    return remember(markdown, outline(markdown))


def outline_of(markdown: str) -> Outline:
    """The text's outline (parsed now unless it is known)."""
    return _parsed(markdown)[0]


def parse(markdown: str) -> list[Section]:
    """All sections in document order (the root preamble first when it has text)."""
    return list(_parsed(markdown)[1])


def top_level(markdown: str) -> list[Section]:
    """The section tree: the top-level sections in document order, each with its `children`."""
    return [s for s in _parsed(markdown)[1] if s.parent is None]


def find(markdown: str, section_id: str) -> Section | None:
    return _parsed(markdown)[2].get(section_id)


def body(markdown: str, section: Section) -> str:
    """The section's own body (of `markdown`, the text it was parsed from), its lines joined by newlines."""
    chunk = markdown[section.body_from : section.body_to]
    if "\r" in chunk:
        chunk = _LINE_END.sub("\n", chunk)
    return chunk.strip("\n")


def replace_body(markdown: str, section_id: str, new_body: str) -> str:
    """The document with one section's own body replaced; headings and other sections untouched."""
    shape, _, index = _parsed(markdown)
    section = index.get(section_id)
    if section is None:
        raise KeyError(section_id)
    new_lines = lines_of(new_body.strip("\n"))
    if section.id != ROOT_ID:
        new_lines = ["", *new_lines] if new_lines else []
    if section.body_end < shape.line_count and new_lines:
        new_lines.append("")
    # A text that is "\n".join(its lines) + "\n" (no CR, a final newline; what this function writes) is
    # cut by character offsets; any other is rebuilt from its lines, which normalises its line ends.
    plain = markdown.endswith("\n") and "\r" not in markdown
    if plain:
        middle = "".join(line + "\n" for line in new_lines)
        text = markdown[: section.body_from] + middle + markdown[section.body_to :]
    else:
        lines = lines_of(markdown)
        text = "\n".join(lines[: section.body_start] + new_lines + lines[section.body_end :]) + "\n"
    text = text.rstrip("\n") + "\n"
    if len(text) >= SPLICE_FROM and plain and len(new_body) <= _SPLICE_LIMIT:
        spliced = _splice(markdown, shape, section, new_lines, text)
        if spliced is not None:
            remember(text, spliced)
    return text


def _splice(markdown: str, old: Outline, sec: Section, new_lines: list[str], text: str) -> Outline | None:
    """The outline of `text` (the old text with `sec`'s body lines replaced by `new_lines`), derived from
    the old one; None when that cannot be shown to equal a fresh parse.

    A section's body starts right after a top-level heading (or at the start), where no block is open, so
    it parses the same on its own. It is parsed on its own followed by the next heading's lines: when that
    heading still comes out as the same heading at the same place, every block the new body opened is
    closed by then and the rest of the text parses as before, shifted. Link reference definitions (in the
    old text or the new body) change how headings anywhere read, so they rule a splice out."""
    if old.references:
        return None
    following = [h for h in old.headings if h[1] >= sec.body_end]
    sentinel = (
        lines_of(markdown[old.offset(following[0][1]) : old.offset(following[0][2])]) if following else []
    )
    region = outline("\n".join(new_lines + sentinel) + "\n")
    if region.references:
        return None
    inside = list(region.headings)
    if following:
        level, start, end, title = following[0]
        expected = (level, len(new_lines), len(new_lines) + end - start, title)
        if not inside or inside.pop() != expected:
            return None
    base_line, base_char = sec.body_start, old.offset(sec.body_start)
    shift_lines = len(new_lines) - (sec.body_end - sec.body_start)
    shift_chars = sum(len(line) + 1 for line in new_lines) - (old.offset(sec.body_end) - base_char)
    headings: list[Heading] = [h for h in old.headings if h[1] < sec.body_start]
    offsets = {0: 0}
    for _, start, end, _ in headings:  # a line at the old text's end is where the new lines begin
        offsets[start], offsets[end] = old.offset(start), old.offset(end)
    for level, start, end, title in inside:
        headings.append((level, start + base_line, end + base_line, title))
        offsets[start + base_line] = base_char + region.offsets[start]
        offsets[end + base_line] = base_char + region.offset(end)
    for level, start, end, title in following:
        headings.append((level, start + shift_lines, end + shift_lines, title))
        offsets[start + shift_lines] = old.offsets[start] + shift_chars
        offsets[end + shift_lines] = old.offset(end) + shift_chars
    count = text.count("\n")
    first = headings[0][1] if headings else count
    offsets = {line: at for line, at in offsets.items() if line < count}
    if sec.id == ROOT_ID:
        preamble = bool(text[: len(text) if first >= count else offsets[first]].strip())
    else:
        preamble = old.preamble
    return Outline(tuple(headings), count, len(text), preamble, offsets, {})


def tree(markdown: str, *, with_content: bool = False) -> list[dict[str, Any]]:
    """Nested section dicts: sectionId, title (also as heading), level, children."""

    def node(sec: Section) -> dict[str, Any]:
        out: dict[str, Any] = {
            "sectionId": sec.id,
            "title": sec.title,
            "heading": sec.title,
            "level": sec.level,
        }
        if with_content:
            out["content"] = body(markdown, sec)
        out["children"] = [node(c) for c in sec.children]
        return out

    return [node(s) for s in top_level(markdown)]
