"""Markdown sections: headings become a tree of stable ids (`sec:budget:line-items`).

Parsing uses markdown-it (CommonMark), so headings inside code fences or setext headings are handled
as a Markdown reader would. A section's body is its text up to the next heading of any level.

Lines are Markdown's: they end at a newline, a CR LF or a CR, as markdown-it counts them (its token maps
are line numbers). `str.splitlines` also ends lines at U+000B, U+000C, U+001C-U+001E, U+0085, U+2028 and
U+2029, which would put every section after such a character on the wrong lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt

ROOT_ID = "sec:_root"
MAX_SECTION_ID = 256
_md = MarkdownIt("commonmark")
_CACHE_TEXT_LIMIT = 256 * 1024
_LINE_END = re.compile(r"\r\n|\r|\n")


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
    parent: str | None = None
    children: list[Section] = field(default_factory=list)


def slugify(text: str) -> str:
    s = text.lower().replace("_", " ")
    s = re.sub(r"\s+", "-", s)
    s = re.sub(r"[^a-z0-9-]", "", s)
    s = re.sub(r"-{2,}", "-", s).strip("-")
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


def _scan(markdown: str) -> tuple[tuple[int, int, int, str], ...]:
    """The top-level headings (level, first line, line after, text)."""
    tokens = _md.parse(markdown)
    return tuple(
        (int(tok.tag[1]), tok.map[0], tok.map[1], _heading_text(tokens[i + 1]))
        for i, tok in enumerate(tokens)
        if tok.type == "heading_open" and tok.map and tok.level == 0
    )


def parse(markdown: str) -> list[Section]:
    """All sections in document order (the root preamble first when it has text)."""
    return list(_parsed(markdown)[0])


def find(markdown: str, section_id: str) -> Section | None:
    return _parsed(markdown)[1].get(section_id)


def _parsed(markdown: str) -> tuple[tuple[Section, ...], dict[str, Section]]:
    # A write reads its resource's Markdown several times (propose, each vote, the merge): the sections of
    # the last texts seen are kept, but not of large texts (the text would stay in memory with the entry).
    return _parse(markdown) if len(markdown) <= _CACHE_TEXT_LIMIT else _parse.__wrapped__(markdown)


@lru_cache(maxsize=128)
def _parse(markdown: str) -> tuple[tuple[Section, ...], dict[str, Section]]:
    lines = lines_of(markdown)
    headings = _scan(markdown)
    sections: list[Section] = []
    first = headings[0][1] if headings else len(lines)
    if any(line.strip() for line in lines[:first]):
        sections.append(Section(ROOT_ID, "", 0, 0, 0, 0, first))
    stack: list[Section] = []  # open ancestors
    siblings: dict[str | None, set[str]] = {}  # slugs taken under each parent
    for n, (level, start, end, text) in enumerate(headings):
        while stack and stack[-1].heading_level >= level:
            stack.pop()
        parent = stack[-1] if stack else None
        slug = _unique(slugify(text), siblings.setdefault(parent.id if parent else None, set()))
        sid = f"{parent.id}:{slug}" if parent else f"sec:{slug}"
        body_end = headings[n + 1][1] if n + 1 < len(headings) else len(lines)
        sec = Section(
            id=sid[:MAX_SECTION_ID],
            title=text,
            level=(parent.level + 1) if parent else 1,
            heading_level=level,
            heading_start=start,
            body_start=end,
            body_end=body_end,
            parent=parent.id if parent else None,
        )
        if parent:
            parent.children.append(sec)
        sections.append(sec)
        stack.append(sec)
    return tuple(sections), {sec.id: sec for sec in reversed(sections)}


def body(markdown: str, section: Section) -> str:
    lines = lines_of(markdown)
    return "\n".join(lines[section.body_start : section.body_end]).strip("\n")


def replace_body(markdown: str, section_id: str, new_body: str) -> str:
    """The document with one section's own body replaced; headings and other sections untouched."""
    section = find(markdown, section_id)
    if section is None:
        raise KeyError(section_id)
    lines = lines_of(markdown)
    new_lines = lines_of(new_body.strip("\n"))
    if section.id != ROOT_ID:
        new_lines = ["", *new_lines] if new_lines else []
    if section.body_end < len(lines) and new_lines:
        new_lines.append("")
    out = lines[: section.body_start] + new_lines + lines[section.body_end :]
    return "\n".join(out).rstrip("\n") + "\n"


def tree(markdown: str, *, with_content: bool = False) -> list[dict[str, Any]]:
    """Nested section dicts: sectionId, title (also as heading), level, children."""
    sections = parse(markdown)

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

    return [node(s) for s in sections if s.parent is None]
