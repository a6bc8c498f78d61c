"""The numbering of Australian Acts and regulations, read from an instrument's text line by line.

Registers' renditions (DOCX, EPUB, PDF) and the Open Australian Legal Corpus give an instrument as text in
which the structure is in the numbering itself:

- structural headings: `Chapter 2—…`, `Part 3—…`, `Division 1—…`, `Subdivision A—…`, `Schedule 1—…`
  (a dash, a tab or two spaces between designation and heading; or the designation alone on its line);
- provisions: `180  Heading` / `180A  Heading` (sections of an Act, regulations of a regulation — `reg 5` —
  rules of rules — `r 5` —, clauses of a schedule — `sch 1 cl 2`);
- inside a provision, subsections `(1)`, paragraphs `(a)`, subparagraphs `(i)` and sub-subparagraphs `(A)`;
- notes and examples (`Note:`, `Note 2:`, `Example:`), kept apart from the provision's own text.

`parse` returns every unit in document order: a structural unit with its heading, a provision with its own
text (its subsections included) and notes, and each subsection, paragraph … as a unit of its own
(`s 180(1)(a)`), so a pinpoint resolves to the exact subsection whose text is there. Ids follow AGLC4
(rule 3.1.4): `ch 2 pt 1 div 3 sub-div 2`, `pt 2`, `s 180`, `r 5`, `sch 1 cl 2`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum


class ProvisionKind(StrEnum):
    """What an instrument's numbered provisions are called (their pinpoint abbreviation)."""

    SECTION = "s"
    REGULATION = "reg"
    RULE = "r"
    CLAUSE = "cl"


def kind_for(instrument_type: str, title: str) -> ProvisionKind:
    """The pinpoint abbreviation of an instrument's provisions (AGLC4 3.4): `s` for an Act, `reg` for a
    regulation, `r` for rules, `cl` for a bill. (The resolver keeps `reg` and `r` apart, as AGLC does.)"""
    lowered = title.casefold()
    if re.search(r"\bbill\b", lowered):
        return ProvisionKind.CLAUSE
    if re.search(r"\brules\b", lowered):
        return ProvisionKind.RULE
    if instrument_type == "regulation" or re.search(r"\bregulations?\b", lowered):
        return ProvisionKind.REGULATION
    return ProvisionKind.SECTION


_DESIG = r"[0-9]+[A-Z]{0,4}(?:\.[0-9]+[A-Z]{0,4})*|[A-Z]{1,2}"
_SEP = r"(?:\s*[\u2014\u2013]\s*|\s+-\s+|\t+|\s{2,}|:\s+)"
_STRUCTURE = re.compile(
    rf"^(?P<kind>Chapter|Part|Division|Subdivision|Sub-division|Schedule)\s+(?P<d>{_DESIG})"
    rf"(?:{_SEP}(?P<title>\S.*))?$"
)
_LEVEL_OF = {"Chapter": 0, "Part": 1, "Division": 2, "Subdivision": 3, "Sub-division": 3}
_ABBREV = {
    "Chapter": "ch",
    "Part": "pt",
    "Division": "div",
    "Subdivision": "sub-div",
    "Sub-division": "sub-div",
}
_PROVISION = re.compile(
    r"^(?P<d>[0-9]+[A-Z]{0,4}(?:\.[0-9]+[A-Z]{0,4})*)\.?(?:\t+|\s+[\u2014\u2013]\s*|\s+)(?P<t>[A-Z].*)$"
)
_SUB = re.compile(r"^\((?P<d>[0-9]+[A-Za-z]{0,3}|[a-z]{1,3}|[ivxlc]{1,6}|[A-Z]{1,2})\)\s*(?P<t>.*)$")
_NOTE = re.compile(r"^(?:Note|Notes|Example|Examples)(?:\s+[0-9]+)?\s*[:.\u2014\u2013-]\s*", re.IGNORECASE)
_LEADER = re.compile(r"(?:\s*\.{3,}\s*|\t+)[0-9ivxlc]+$")
_MARKUP = re.compile(r"^(?:#{1,6}\s+|[*_]{2}|[-*+]\s+|>\s*)|[*_]{2}$")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~])")
_ROMAN = re.compile(r"^[ivxlc]+$")
_MAX_ID = 60
_MAX_TITLE = 500


@dataclass
class Unit:
    """One unit of an instrument: structural (`pt 2`), a provision (`s 180`) or part of one (`s 180(1)`)."""

    section_id: str
    title: str
    depth: int
    parent_id: str | None
    lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def content(self) -> str | None:
        text = "\n".join(self.lines).strip()
        return text or None

    @property
    def note_text(self) -> str | None:
        text = "\n".join(self.notes).strip()
        return text or None


def clean(line: str) -> str:
    """A line as the parser reads it: Markdown heading marks, bold markers and dot leaders dropped."""
    text = _ESCAPE.sub(r"\1", line.replace("\u00a0", " ")).strip()
    text = _MARKUP.sub("", text).strip()
    text = _MARKUP.sub("", text).strip()
    return _LEADER.sub("", text).rstrip()


def _looks_like_heading(title: str) -> bool:
    """A provision heading: short, not a sentence (no final full stop, colon or semicolon)."""
    return len(title) <= 250 and not title.endswith((".", ";", ":", ",")) and len(title.split()) <= 30


def _sub_level(desig: str, previous: list[tuple[int, str]]) -> int:
    """0 subsection (1), 1 paragraph (a), 2 subparagraph (i), 3 sub-subparagraph (A). A roman-looking
    letter that follows the last paragraph's letter ((i) after (h), (c) after (b)) is a paragraph; inside a
    paragraph otherwise it is a subparagraph."""
    if desig[0].isdigit():
        return 0
    if desig.isupper():
        return 3
    if _ROMAN.match(desig):
        last_para = next((d for lvl, d in reversed(previous) if lvl == 1), None)
        current = previous[-1][0] if previous else 0
        if last_para is not None and _next_letter(last_para) == desig:
            return 1
        if current >= 1:
            return 2
    return 1


def _next_letter(d: str) -> str:
    return chr(ord(d[-1]) + 1) if len(d) == 1 and d < "z" else ""


class _Parser:
    def __init__(self, kind: ProvisionKind) -> None:
        self.kind = kind
        self.units: dict[str, Unit] = {}
        self.order: list[str] = []
        self.structure: list[tuple[int, str]] = []  # (level, id) of the open chapter/part/division …
        self.schedule: str | None = None
        self.provision: Unit | None = None
        self.subs: list[tuple[int, str]] = []  # the open subsection path (level, designator)
        self.sub_units: list[Unit] = []
        self.in_note = False
        self.preamble = Unit("preamble", "Preamble", 1, None)

    # ---- units ---------------------------------------------------------------------------------
    def _add(self, unit: Unit) -> Unit:
        unit.section_id = unit.section_id[:_MAX_ID]
        unit.title = (unit.title or unit.section_id)[:_MAX_TITLE]
        existing = self.units.get(unit.section_id)
        if existing is not None:
            if existing.content or existing.note_text:
                return Unit(unit.section_id, unit.title, unit.depth, unit.parent_id)  # a duplicate: dropped
            self.order.remove(unit.section_id)  # a contents entry, replaced by the body's heading
        self.units[unit.section_id] = unit
        self.order.append(unit.section_id)
        return unit

    def _structural(self, word: str, desig: str, title: str | None) -> None:
        self._close_provision()
        if word == "Schedule":
            self.structure = []
            self.schedule = f"sch {desig}"
            self._add(Unit(self.schedule, title or f"Schedule {desig}", 1, None))
            self.structure = [(-1, self.schedule)]
            return
        level = _LEVEL_OF[word]
        self.structure = [(lvl, sid) for lvl, sid in self.structure if lvl < level]
        parent = self.structure[-1][1] if self.structure else None
        own = f"{_ABBREV[word]} {desig}"
        sid = f"{parent} {own}" if parent else own
        self._add(Unit(sid, title or f"{word} {desig}", len(self.structure) + 1, parent))
        self.structure.append((level, sid))

    def _provision_start(self, desig: str, title: str) -> None:
        self._close_provision()
        if self.schedule is not None:
            sid = f"{self.schedule} cl {desig}"
        else:
            sid = f"{self.kind} {desig}"
        parent = self.structure[-1][1] if self.structure else None
        self.provision = self._add(Unit(sid, title, len(self.structure) + 1, parent))

    def _close_provision(self) -> None:
        self.provision = None
        self.subs = []
        self.sub_units = []
        self.in_note = False

    def _subsection(self, desig: str, text: str) -> None:
        assert self.provision is not None
        level = _sub_level(desig, self.subs)
        self.subs = [(lvl, d) for lvl, d in self.subs if lvl < level] + [(level, desig)]
        self.sub_units = [u for u in self.sub_units if u.depth - self.provision.depth <= len(self.subs) - 1]
        path = "".join(f"({d})" for _lvl, d in self.subs)
        parent = self.sub_units[-1].section_id if self.sub_units else self.provision.section_id
        unit = self._add(
            Unit(
                f"{self.provision.section_id}{path}",
                f"{self.provision.title} ({desig})"[:_MAX_TITLE],
                self.provision.depth + len(self.subs),
                parent,
            )
        )
        self.sub_units = self.sub_units[: len(self.subs) - 1] + [unit]
        line = f"({desig}) {text}".rstrip()
        self._text(line)

    def _text(self, line: str) -> None:
        target = self.provision
        if target is None:
            unit = self.units.get(self.structure[-1][1]) if self.structure else self.preamble
            (unit or self.preamble).lines.append(line)
            return
        if self.in_note:
            target.notes.append(line)
            if self.sub_units:
                self.sub_units[-1].notes.append(line)
            return
        target.lines.append(line)
        for unit in self.sub_units:
            unit.lines.append(line)

    # ---- lines ---------------------------------------------------------------------------------
    def feed(self, raw: str) -> None:
        line = clean(raw)
        if not line:
            return
        m = _STRUCTURE.match(line)
        if m and (m["title"] is None or _looks_like_heading(m["title"])):
            self._structural(m["kind"], m["d"], (m["title"] or "").strip() or None)
            return
        m = _PROVISION.match(line)
        if m and _looks_like_heading(m["t"]) and not _NOTE.match(m["t"]):
            self._provision_start(m["d"], m["t"].strip())
            return
        if self.provision is not None:
            m = _SUB.match(line)
            if m:
                self.in_note = False
                self._subsection(m["d"], m["t"])
                return
            if _NOTE.match(line):
                self.in_note = True
                self._text(line)
                return
        self._text(line)

    def result(self) -> list[Unit]:
        out = [self.units[sid] for sid in self.order]
        if self.preamble.content:
            out.insert(0, self.preamble)
        return out


def parse(lines: Iterable[str], *, kind: ProvisionKind = ProvisionKind.SECTION) -> list[Unit]:
    """Every unit of the instrument, in document order (ids unique: a contents entry is replaced by the
    body's heading of the same id; a later duplicate of a provision with text is dropped)."""
    parser = _Parser(kind)
    for line in lines:
        parser.feed(line)
    return parser.result()
