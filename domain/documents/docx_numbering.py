"""Word's automatic numbering, kept as text: a heading numbered by a list definition (directly or through
its style) reads `1.1 Section 1.1`, as the reader of the document sees it, not `Section 1.1`.

numbering.xml defines abstract numberings (per level: start, format and text such as `%1.%2`) and the
numbering instances (`w:num`) paragraphs refer to, which may restart levels (`lvlOverride/startOverride`).
Counting follows Word: every numbered paragraph in document order advances its level and resets the levels
below it; instances of one abstract numbering share its counters unless they restart a level."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from lxml import etree

_PLACEHOLDER = re.compile(r"%([1-9])")
_ROMAN = (
    (1000, "m"),
    (900, "cm"),
    (500, "d"),
    (400, "cd"),
    (100, "c"),
    (90, "xc"),
    (50, "l"),
    (40, "xl"),
    (10, "x"),
    (9, "ix"),
    (5, "v"),
    (4, "iv"),
    (1, "i"),
)


@dataclass
class _Level:
    start: int = 1
    fmt: str = "decimal"
    text: str = ""


@dataclass
class Numbering:
    """Abstract numberings' levels, instances' abstract ids and restarts, and styles' numbering."""

    abstract: dict[str, dict[int, _Level]] = field(default_factory=dict)
    instances: dict[str, tuple[str, dict[int, int]]] = field(default_factory=dict)
    styles: dict[str, tuple[str, int]] = field(default_factory=dict)
    counters: dict[str, dict[int, int]] = field(default_factory=dict)
    started: set[tuple[str, int]] = field(default_factory=set)

    def label(self, num_id: str, ilvl: int) -> str | None:
        """Advance the counter of (instance, level) and answer its text (None: not numbered text)."""
        inst = self.instances.get(num_id)
        if inst is None:
            return None
        abstract_id, overrides = inst
        levels = self.abstract.get(abstract_id, {})
        counters = self.counters.setdefault(abstract_id, {})
        level = levels.get(ilvl, _Level())
        if ilvl in overrides and (num_id, ilvl) not in self.started:
            self.started.add((num_id, ilvl))
            counters[ilvl] = overrides[ilvl]
        else:
            counters[ilvl] = counters.get(ilvl, level.start - 1) + 1
        for deeper in [k for k in counters if k > ilvl]:
            del counters[deeper]
        if level.fmt in ("bullet", "none") or not level.text:
            return None

        def one(m: re.Match[str]) -> str:
            n = int(m.group(1)) - 1
            lv = levels.get(n, _Level())
            return _format(counters.get(n, lv.start), lv.fmt)

        return _PLACEHOLDER.sub(one, level.text).strip() or None


def _format(value: int, fmt: str) -> str:
    if fmt in ("lowerLetter", "upperLetter"):
        letters = chr(ord("a") + (value - 1) % 26) * ((value - 1) // 26 + 1) if value > 0 else str(value)
        return letters.upper() if fmt == "upperLetter" else letters
    if fmt in ("lowerRoman", "upperRoman") and 0 < value < 4000:
        out, rest = "", value
        for n, r in _ROMAN:
            while rest >= n:
                out, rest = out + r, rest - n
        return out.upper() if fmt == "upperRoman" else out
    if fmt == "decimalZero":
        return f"{value:02d}"
    return str(value)


def _val(el: etree._Element | None, q: Callable[[str], str]) -> str | None:
    return el.get(q("val")) if el is not None else None


def load(
    numbering: etree._Element | None, styles: etree._Element | None, q: Callable[[str], str]
) -> Numbering:
    out = Numbering()
    if numbering is not None:
        for ab in numbering.findall(q("abstractNum")):
            levels: dict[int, _Level] = {}
            for lvl in ab.findall(q("lvl")):
                ilvl = lvl.get(q("ilvl")) or ""
                if not ilvl.isdigit():
                    continue
                start = _val(lvl.find(q("start")), q) or "1"
                levels[int(ilvl)] = _Level(
                    int(start) if start.isdigit() else 1,
                    _val(lvl.find(q("numFmt")), q) or "decimal",
                    _val(lvl.find(q("lvlText")), q) or "",
                )
            out.abstract[ab.get(q("abstractNumId")) or ""] = levels
        for num in numbering.findall(q("num")):
            overrides: dict[int, int] = {}
            for ov in num.findall(q("lvlOverride")):
                ilvl, start = ov.get(q("ilvl")) or "", _val(ov.find(q("startOverride")), q) or ""
                if ilvl.isdigit() and start.isdigit():
                    overrides[int(ilvl)] = int(start)
            out.instances[num.get(q("numId")) or ""] = (
                _val(num.find(q("abstractNumId")), q) or "",
                overrides,
            )
    if styles is not None:
        based: dict[str, str] = {}
        own: dict[str, tuple[str, int]] = {}
        for style in styles.findall(q("style")):
            sid = style.get(q("styleId")) or ""
            parent = _val(style.find(q("basedOn")), q)
            if parent:
                based[sid] = parent
            num_pr = style.find(f"{q('pPr')}/{q('numPr')}")
            if num_pr is not None:
                num_id = _val(num_pr.find(q("numId")), q)
                ilvl = _val(num_pr.find(q("ilvl")), q) or "0"
                if num_id and ilvl.isdigit():
                    own[sid] = (num_id, int(ilvl))
        for sid in {*own, *based}:
            seen, cur = set(), sid
            while cur and cur not in own and cur not in seen:
                seen.add(cur)
                cur = based.get(cur, "")
            if cur in own:
                out.styles[sid] = own[cur]
    return out


def paragraph_number(
    p: etree._Element, style_id: str | None, numbering: Numbering, q: Callable[[str], str]
) -> str | None:
    """Advance the numbering for a paragraph (direct numPr, else its style's) and answer its label."""
    num_pr = p.find(f"{q('pPr')}/{q('numPr')}")
    num_id: str | None = None
    ilvl = 0
    if num_pr is not None:
        num_id = _val(num_pr.find(q("numId")), q)
        raw = _val(num_pr.find(q("ilvl")), q)
        if num_id is None and style_id in numbering.styles:
            num_id = numbering.styles[style_id][0]
        if raw and raw.isdigit():
            ilvl = int(raw)
        elif style_id in numbering.styles:
            ilvl = numbering.styles[style_id][1]
    elif style_id in numbering.styles:
        num_id, ilvl = numbering.styles[style_id]
    if not num_id or num_id == "0":
        return None
    return numbering.label(num_id, ilvl)
