"""A section's comparison as HTML, the same wherever a person decides (the review desk, a FullReview share
page): each changed line labelled in words, deleted text `<del>`, inserted `<ins>`, so it reads without colour
and with a screen reader (domain/review/diff.py computes it). The stylesheet marks them inside `.change`."""

from __future__ import annotations

from domain.review.diff import Change, Line, LineKind, SectionDiff
from web.kernel.html import Markup, esc, h, join

_LINE_LABEL = {
    Change.INSERTED: "inserted",
    Change.DELETED: "deleted",
    Change.CHANGED: "changed",
}


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def summary_of(diff: SectionDiff) -> str:
    if diff.identical:
        return "The proposed text is the same as the section now."
    parts = []
    if diff.deleted:
        parts.append(f"{plural(diff.deleted, 'line')} deleted")
    if diff.changed:
        parts.append(f"{plural(diff.changed, 'line')} changed")
    if diff.inserted:
        parts.append(f"{plural(diff.inserted, 'line')} inserted")
    return ", ".join(parts).capitalize() + "."


def _words(line: Line) -> Markup:
    return join(
        h("<del>{t}</del>", t=w.text)
        if w.change is Change.DELETED
        else h("<ins>{t}</ins>", t=w.text)
        if w.change is Change.INSERTED
        else esc(w.text)
        for w in line.words
    )


def _line(line: Line) -> Markup:
    if line.change is Change.SAME:
        return h('<li class="same"><span class="text">{t}</span></li>', t=line.before or " ")
    kind = "" if line.kind is LineKind.TEXT else f"{line.kind.value} "
    tag = h('<span class="tag">{kind}{what}</span>', kind=kind, what=_LINE_LABEL[line.change])
    if line.change is Change.DELETED:
        text = h("<del>{t}</del>", t=line.before or " ")
    elif line.change is Change.INSERTED:
        text = h("<ins>{t}</ins>", t=line.after or " ")
    else:
        text = _words(line)
    return h(
        '<li class="{change}">{tag}<span class="text">{text}</span></li>',
        change=line.change.value,
        tag=tag,
        text=text,
    )


def diff_list(diff: SectionDiff) -> Markup:
    return h(
        '<p>{summary} <span class="muted">Inserted text is <ins>underlined</ins>, deleted text '
        "<del>struck through</del>.</span></p>"
        '<ol class="diff" aria-label="Changes line by line">{lines}</ol>',
        summary=summary_of(diff),
        lines=join(_line(x) for x in diff.lines),
    )
