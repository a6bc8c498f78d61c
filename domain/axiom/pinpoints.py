"""AGLC4 pinpoints (rule 3.1.4, 3.4): `s 180(1)(a)`, `ss 24–9`, `ss 4(2)(a)–(b), (4), 5(b)`, `sch 1 cl 2`,
`ch 2 pt 1 div 3 sub-div 2`, `pt 2D.1`, `reg 5(1)`, `r 34`, `cl 2`, `item 3`, and a trailing
`(definition of 'x')`; the spelled-out and dotted forms people type (`section 19`, `s. 19`, `Sec 19(1)`) too.

A pinpoint is parsed into levels (kind + designators) and given its canonical AGLC form; `units` lists the
single provisions a store can verify, and `trimmed` the ever shorter forms of one (s 180(1)(a) → s 180(1) →
s 180), so a resolver can say exactly how much of a pinpoint it verified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# canonical singular, canonical plural, the other spellings accepted for each
_KINDS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("s", "ss", ("s.", "sec", "sec.", "section"), ("ss.", "secs", "sections")),
    ("sch", "schs", ("sch.", "sched", "schedule"), ("schedules",)),
    ("pt", "pts", ("pt.", "part"), ("parts",)),
    ("div", "divs", ("div.", "division"), ("divisions",)),
    ("sub-div", "sub-divs", ("subdiv", "sub-division", "subdivision"), ("subdivs", "subdivisions")),
    ("reg", "regs", ("reg.", "regulation"), ("regs.", "regulations")),
    ("r", "rr", ("r.", "rule"), ("rules",)),
    ("cl", "cls", ("cl.", "clause"), ("clauses",)),
    ("item", "items", (), ()),
    ("ch", "chs", ("ch.", "chapter"), ("chapters",)),
)
# Spelled-out words: "… Regulation 2017" is a title ending in its year, not regulation 2017 of something.
_SPELLED = {
    alias
    for _s, _p, singular, plural in _KINDS
    for alias in singular + plural
    if len(alias) > 4 and "." not in alias
}
_ALIASES: dict[str, tuple[str, bool]] = {}
for _singular, _plural, _more_singular, _more_plural in _KINDS:
    for _alias in (_singular, *_more_singular):
        _ALIASES[_alias] = (_singular, False)
    for _alias in (_plural, *_more_plural):
        _ALIASES[_alias] = (_singular, True)
_PLURAL_OF = {singular: plural for singular, plural, _a, _b in _KINDS}

_KIND = "|".join(re.escape(a) for a in sorted(_ALIASES, key=len, reverse=True))
# 180, 18C, 588G, 4.15, 2D.1, 8-1, 1.01, 3.2.1, IV, IIIA (roman numerals in capitals only: 'pt IV')
_DESIG = r"(?:\d+[A-Za-z]{0,4}|[IVXLC]{1,7}[A-Z]{0,2})(?:[.\-]\d+[A-Za-z]{0,4})*"
_SUB = r"\(\s*[A-Za-z0-9]{1,6}\s*\)"
_SINGLE = rf"{_DESIG}(?:\s*{_SUB})*"
_DASH = r"\s*[\u2013\u2014]\s*|\s+-\s+"
_ITEM = rf"(?:{_SINGLE}|(?:{_SUB}\s*)+)(?:(?:{_DASH})(?:{_DESIG})?(?:\s*{_SUB})*)?"
_LIST = rf"{_ITEM}(?:\s*(?:,|\band\b|&)\s*{_ITEM})*"
_LEVEL = rf"(?P<kind>{_KIND})(?![\w])\s*(?P<body>{_LIST})"
_DEFINITION = r"\(\s*definitions?\s+of\s+(?P<term>[^()]{1,120})\)"
_LEVEL_RE = re.compile(_LEVEL, re.IGNORECASE)
_PINPOINT_RE = re.compile(
    rf"(?:{_LEVEL.replace('?P<kind>', '').replace('?P<body>', '')})"
    rf"(?:\s+(?:{_LEVEL.replace('?P<kind>', '').replace('?P<body>', '')}))*"
    rf"(?:\s*{_DEFINITION})?\s*[.,;]?\s*",
    re.IGNORECASE,
)
_Unit = tuple[str, tuple[str, ...]]  # a designator and its subs: ("180", ("1", "a"))
_START = re.compile(rf"(?:^|(?<=[\s,]))(?:{_KIND})(?![\w])", re.IGNORECASE)
_YEAR = re.compile(r"(?:18|19|20)\d{2}")
_DESIG_RE = re.compile(rf"^(?P<d>{_DESIG})(?P<subs>(?:\s*{_SUB})*)$")


@dataclass(frozen=True)
class Provision:
    """One provision: `s 180(1)(a)` is Provision('s', '180', ('1', 'a'))."""

    kind: str
    number: str
    subs: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return f"{self.kind} {self.number}" + "".join(f"({s})" for s in self.subs)


@dataclass(frozen=True)
class Level:
    kind: str  # canonical singular
    plural: bool
    # each item a range (first, last) of designators with their subs; last is None for a single one
    items: tuple[tuple[_Unit, _Unit | None], ...]

    @property
    def text(self) -> str:
        def one(number: str, subs: tuple[str, ...]) -> str:
            return number + "".join(f"({s})" for s in subs)

        parts = []
        for first, last in self.items:
            part = one(*first)
            if last is not None:
                # a range within one provision's subs is written from the first differing part: 4(2)(a)–(b)
                if last[0] == first[0] and last[1]:
                    part += "\u2013" + "".join(f"({s})" for s in last[1][_common(first[1], last[1]) :])
                else:
                    part += "\u2013" + one(*last)
            parts.append(part)
        return f"{_PLURAL_OF[self.kind] if self.plural else self.kind} " + ", ".join(parts)


def _common(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return min(n, len(b) - 1)


@dataclass(frozen=True)
class Pinpoint:
    levels: tuple[Level, ...]
    definition: str | None = None

    @property
    def text(self) -> str:
        """The canonical AGLC form, ranges written out in full: `s 180(1)`, `ss 24–29`, `sch 1 cl 2`."""
        out = " ".join(level.text for level in self.levels)
        return out + (f" (definition of '{self.definition}')" if self.definition else "")

    @property
    def is_range_or_list(self) -> bool:
        return any(level.plural or len(level.items) > 1 for level in self.levels)

    def units(self) -> list[str]:
        """The single provisions to verify, as their canonical text with the enclosing levels: `sch 1 cl 2`;
        a range or list gives each of its ends and items (a range's middle is not enumerable)."""
        head = " ".join(level.text for level in self.levels[:-1])
        last = self.levels[-1]
        out: list[str] = []
        for first, end in last.items:
            for number, subs in (first,) if end is None else (first, end):
                unit = Provision(last.kind, number, subs).text
                out.append(f"{head} {unit}" if head else unit)
        return list(dict.fromkeys(out))


def trimmed(unit: str) -> list[str]:
    """`sch 1 cl 2(a)` → [`sch 1 cl 2(a)`, `sch 1 cl 2`, `sch 1`]: ever less specific forms of one unit."""
    forms = [unit]
    while True:
        current = forms[-1]
        shorter = re.sub(r"\([^()]*\)$", "", current)
        if shorter == current:
            head, _sep, _tail = current.rpartition(" ")
            head, _sep, _tail = head.rpartition(" ")  # drop the last level's kind and designator
            shorter = head
        if not shorter or shorter == current:
            return forms
        forms.append(shorter)


def _split_item(body: str, plural: bool) -> list[tuple[_Unit, _Unit | None]]:
    items: list[tuple[_Unit, _Unit | None]] = []
    for raw in re.split(r"\s*(?:,|\band\b|&)\s*", body.strip()):
        if not raw:
            continue
        ends = re.split(_DASH, raw, maxsplit=1)
        if len(ends) == 1 and plural:
            ends = _hyphen_range(raw)
        # `ss 4(2)(a)–(b), (4)`: an item of subs alone belongs to the provision before it (s 4(4))
        first = _designator(ends[0], like=items[-1][0] if items else None, keep_subs=False)
        last = _designator(ends[1], like=first, keep_subs=True) if len(ends) == 2 else None
        items.append((first, last))
    return items


def _hyphen_range(raw: str) -> list[str]:
    """`ss 180-184`: with a plain hyphen and no en dash, a plural pinpoint's hyphen is its range
    (`ss 8-1-8-5`: the middle one), not a hyphenated number (`s 8-1` of the Income Tax Assessment Act)."""
    parts = raw.split("-")
    if len(parts) in (2, 4) and all(p for p in parts):
        half = len(parts) // 2
        return ["-".join(parts[:half]), "-".join(parts[half:])]
    return [raw]


def _designator(text: str, like: _Unit | None = None, *, keep_subs: bool = True) -> _Unit:
    text = text.strip()
    subs_only = re.fullmatch(rf"(?:\s*{_SUB})+", text)
    if subs_only and like is not None:
        # a range's end (4(2)(a)–(b)) replaces the last subs of its start; a list item ((4)) all of them
        subs = tuple(re.findall(r"\(\s*([A-Za-z0-9]{1,6})\s*\)", text))
        kept = like[1][: max(0, len(like[1]) - len(subs))] if keep_subs else ()
        return like[0], tuple(s.casefold() for s in kept + subs)
    m = _DESIG_RE.match(text)
    if not m:
        return text.upper(), ()
    number = m["d"].upper()
    if like is not None and number.isdigit() and like[0].isdigit() and len(number) < len(like[0]):
        number = like[0][: len(like[0]) - len(number)] + number  # AGLC elision: ss 24–9 is 24 to 29
    subs = tuple(s.casefold() for s in re.findall(r"\(\s*([A-Za-z0-9]{1,6})\s*\)", m["subs"] or ""))
    return number, subs


def parse(text: str) -> Pinpoint | None:
    """The pinpoint `text` is in full, or None."""
    text = text.strip()
    if not _PINPOINT_RE.fullmatch(text):
        return None
    definition = None
    if m := re.search(_DEFINITION + r"\s*[.,;]?\s*$", text, re.IGNORECASE):
        definition = m["term"].strip().strip("'\"\u2018\u2019\u201c\u201d").strip()
        text = text[: m.start()]
    levels = []
    for m in _LEVEL_RE.finditer(text):
        kind, plural = _ALIASES[m["kind"].casefold()]
        number = re.match(_DESIG, m["body"].strip())
        if m["kind"].casefold() in _SPELLED and number and _YEAR.fullmatch(number[0]):
            return None  # '… Regulations 2009 (Cth)': a title's last word and year
        items = _split_item(m["body"], plural)
        if not plural and len(items) != 1:
            return None
        levels.append(Level(kind, plural or len(items) > 1 or items[0][1] is not None, tuple(items)))
    return Pinpoint(tuple(levels), definition) if levels else None


def split_trailing(text: str) -> tuple[str, Pinpoint] | None:
    """(what precedes, the pinpoint) when `text` ends in a pinpoint: the longest trailing run that parses,
    so `… Regulation 2017 reg 5` keeps its title."""
    for m in _START.finditer(text):
        if m.start() == 0:
            continue
        pinpoint = parse(text[m.start() :])
        if pinpoint is not None:
            return text[: m.start()], pinpoint
    return None
