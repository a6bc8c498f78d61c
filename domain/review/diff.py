"""What a proposal changes in its section, for the person deciding it: the section's text now and proposed,
compared line by line (so a Markdown table is compared row by row and a list item by item), and within a
line that changed, word by word. Computed with the standard library's `difflib` (its SequenceMatcher is
the comparison `diff` tools use), returning typed results the web layer marks up."""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import StrEnum

from markdown_it import MarkdownIt

# A changed line is shown as one line with its changed words marked when it is this similar to the line it
# replaces; below it, as a deleted line and an inserted one (a rewrite reads better that way).
SIMILAR = 0.5
# Lines longer than this are compared whole, not word by word (the word comparison's cost grows with the
# product of the two lines' lengths; a page must not wait on one huge paragraph).
WORD_DIFF_MAX = 4000
_WORDS = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_LIST_ITEM = re.compile(r"^\s*([-*+]|\d{1,9}[.)])\s")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
# Markdown as the desk shows it: CommonMark with tables and strikethrough, raw HTML in the text shown as
# text (never as markup), links only of the kinds markdown-it lets through (no javascript: and the like).
_md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").enable("strikethrough")


class Change(StrEnum):
    """What happened to a line, or to a run of words within a changed line."""

    SAME = "same"
    INSERTED = "inserted"
    DELETED = "deleted"
    CHANGED = "changed"  # lines only: the line was edited; its words say how


class LineKind(StrEnum):
    """What a line of Markdown is, so that a person reads 'table row deleted' rather than a bare line."""

    TABLE_ROW = "table row"
    TABLE_RULE = "table rule"
    LIST_ITEM = "list item"
    HEADING = "heading"
    BLANK = "blank line"
    TEXT = "line"


@dataclass(frozen=True)
class Words:
    """A run of text within a changed line: kept, inserted or deleted."""

    change: Change
    text: str


@dataclass(frozen=True)
class Line:
    """One line of the comparison: `before` and/or `after` (None where the line is only on one side), its
    kind, and for a changed line the word runs from before to after."""

    change: Change
    kind: LineKind
    before: str | None
    after: str | None
    words: tuple[Words, ...] = ()


@dataclass(frozen=True)
class SectionDiff:
    """The whole comparison, with counts a heading can state ('2 lines deleted, 1 changed')."""

    lines: tuple[Line, ...]
    inserted: int
    deleted: int
    changed: int

    @property
    def identical(self) -> bool:
        return not (self.inserted or self.deleted or self.changed)


def kind_of(line: str) -> LineKind:
    if not line.strip():
        return LineKind.BLANK
    if _TABLE_RULE.match(line) and "-" in line:
        return LineKind.TABLE_RULE
    if line.lstrip().startswith("|"):
        return LineKind.TABLE_ROW
    if _LIST_ITEM.match(line):
        return LineKind.LIST_ITEM
    if _HEADING.match(line):
        return LineKind.HEADING
    return LineKind.TEXT


def _lines(text: str | None) -> list[str]:
    return (text or "").replace("\r\n", "\n").replace("\r", "\n").rstrip("\n").split("\n") if text else []


def words(before: str, after: str) -> tuple[Words, ...]:
    """The word runs that turn `before` into `after` (whitespace and punctuation are words of their own)."""
    a, b = _WORDS.findall(before), _WORDS.findall(after)
    runs: list[Words] = []

    def add(change: Change, tokens: list[str]) -> None:
        if not tokens:
            return
        text = "".join(tokens)
        if runs and runs[-1].change is change:
            runs[-1] = Words(change, runs[-1].text + text)
        else:
            runs.append(Words(change, text))

    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            add(Change.SAME, a[i1:i2])
        else:
            add(Change.DELETED, a[i1:i2])
            add(Change.INSERTED, b[j1:j2])
    return tuple(runs)


def _similar(before: str, after: str) -> bool:
    if kind_of(before) is not kind_of(after) or max(len(before), len(after)) > WORD_DIFF_MAX:
        return False
    return SequenceMatcher(None, before, after, autojunk=False).ratio() >= SIMILAR


def _replaced(before: list[str], after: list[str]) -> list[Line]:
    """Lines `before` replaced by `after`: paired in order while they stay alike, the rest deleted and
    inserted."""
    out: list[Line] = []
    pairs = 0
    while pairs < min(len(before), len(after)) and _similar(before[pairs], after[pairs]):
        pairs += 1
    for old, new in zip(before[:pairs], after[:pairs], strict=True):
        out.append(Line(Change.CHANGED, kind_of(new), old, new, words(old, new)))
    out.extend(Line(Change.DELETED, kind_of(old), old, None) for old in before[pairs:])
    out.extend(Line(Change.INSERTED, kind_of(new), None, new) for new in after[pairs:])
    return out


def section_diff(before: str | None, after: str | None) -> SectionDiff:
    """Compare a section's text now (`before`) with the proposed text (`after`), line by line."""
    a, b = _lines(before), _lines(after)
    lines: list[Line] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            lines.extend(Line(Change.SAME, kind_of(x), x, x) for x in a[i1:i2])
        elif op == "delete":
            lines.extend(Line(Change.DELETED, kind_of(x), x, None) for x in a[i1:i2])
        elif op == "insert":
            lines.extend(Line(Change.INSERTED, kind_of(x), None, x) for x in b[j1:j2])
        else:
            lines.extend(_replaced(a[i1:i2], b[j1:j2]))
    return SectionDiff(
        lines=tuple(lines),
        inserted=sum(1 for x in lines if x.change is Change.INSERTED and x.kind is not LineKind.BLANK),
        deleted=sum(1 for x in lines if x.change is Change.DELETED and x.kind is not LineKind.BLANK),
        changed=sum(1 for x in lines if x.change is Change.CHANGED),
    )


def rendered(markdown: str | None) -> str:
    """Markdown as safe HTML (raw HTML in the text is escaped, never passed through)."""
    return str(_md.render(markdown or ""))
