"""Citation resolution: a legal citation or a standards designation → a verified document id.

Rules (spec/knowledge-graph-api.md, GET /api/axiom/resolve):
- A citation is `Title Year (Jurisdiction) Pinpoint` (AGLC4), or a standards designation.
- Titles match exactly first, then near-exactly (case, spacing, punctuation, '&' for 'and'); never fuzzily:
  every word and the year must be there.
- Legislation is searched before topics (verified facts: topics in consensus or stable).
- Same title in several jurisdictions and none named → ambiguous, with the candidates.

Lookups use an in-memory index (title → instruments) that a process rebuilds when the legislation
store changes: immediately after an ingest committed on the same machine (the holder is told of every
commit there through a change token, such as the runtime's commit generation), and otherwise when the store's
generation token (legislation_state) differs, checked at most once per REFRESH_SECONDS.
"""

from __future__ import annotations

import asyncio
import re
import time
import unicodedata
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.axiom.models import LegislationDoc, LegislationSection, LegislationState
from domain.kernel import jurisdictions
from domain.kernel.errors import BadRequest, NotFound
from domain.topics.models import Topic

REFRESH_SECONDS = 1.0
FACT_STATUSES = ("consensus", "stable")
MAX_CITATION = 500

# ------------------------------------------------------------------------------------------ parsing

_PINPOINT_KINDS = {
    "s": "s",
    "s.": "s",
    "sec": "s",
    "sec.": "s",
    "section": "s",
    "reg": "reg",
    "reg.": "reg",
    "regulation": "reg",
    "r": "r",
    "r.": "r",
    "rule": "r",
    "cl": "cl",
    "cl.": "cl",
    "clause": "cl",
}
_PINPOINT = re.compile(
    r"(?:^|[\s,]+)(?P<kind>section|sec\.?|s\.?|regulation|reg\.?|rule|r\.?|clause|cl\.?)\s*"
    r"(?P<num>\d+(?:[.\-]\d+)*[A-Za-z]{0,3})(?P<sub>(?:\s*\(\s*[A-Za-z0-9]{1,6}\s*\))*)\s*[.,;]?\s*$",
    re.IGNORECASE,
)
_JURISDICTION = re.compile(r"[\s,]+\(\s*(?P<j>[A-Za-z][A-Za-z.\-]{0,12})\s*\)\s*[.,;]?\s*$")
_STANDARD = re.compile(
    r"^\s*(?P<prefix>AS\s*/\s*NZS|SA\s*/\s*SNZ|AS|NZS|SA\s+HB|SA\s+TS|HB)"
    r"(?:\s+(?P<intl>ISO\s*/\s*IEC|ISO|IEC))?\s*"
    r"(?P<num>\d+(?:[.\-]\d+)*)"
    r"(?:\s*(?P<sep>[:\-\u2013\u2014])\s*(?P<year>(?:19|20)\d{2}))?"
    r"(?P<rest>(?:\s.*)?)$",
    re.IGNORECASE | re.DOTALL,
)
_SECTION_KEY = re.compile(
    r"^\s*(?P<kind>section|sec\.?|s\.?|regulation|reg\.?|rule|r\.?|clause|cl\.?)?\s*"
    r"(?P<num>\d+(?:[.\-]\d+)*[A-Za-z]{0,3})(?P<sub>(?:\s*\(\s*[A-Za-z0-9]{1,6}\s*\))*)\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Designation:
    prefix: str  # AS, AS/NZS, NZS, SA HB, …
    international: str | None  # ISO, ISO/IEC, IEC (adopted standards)
    number: str  # 3000, 1170.0, 10140-2
    year: str | None

    @property
    def key(self) -> str:
        """Canonical form: AS/NZS never collapses to AS; '-', '–', '—' and ':' before the year agree."""
        head = self.prefix + (f" {self.international}" if self.international else "")
        return f"{head} {self.number}" + (f":{self.year}" if self.year else "")


def parse_designation(text: str) -> Designation | None:
    parsed = _parse_standard(text)
    return parsed[0] if parsed and not parsed[1].strip() else None


def _parse_standard(text: str) -> tuple[Designation, str, str] | None:
    """(designation, text after it, the designation as written) or None."""
    m = _STANDARD.match(text)
    if not m:
        return None
    prefix = re.sub(r"\s*/\s*", "/", m["prefix"].upper())
    prefix = " ".join(prefix.split())
    intl = re.sub(r"\s*/\s*", "/", m["intl"].upper()) if m["intl"] else None
    number, year = m["num"], m["year"]
    if year is None:
        # Older AS designations write the year after a hyphen: AS 1170.4-2007, AS 3600-2009.
        tail = re.match(r"^(?P<n>.+)-(?P<y>(?:19|20)\d{2})$", number)
        if tail and not intl:
            number, year = tail["n"], tail["y"]
    return Designation(prefix, intl, number, year), m["rest"] or "", text[: m.start("rest")].strip()


def normalise_section(text: str) -> str | None:
    """'s 19', 'S.19', 'section 19 (2)(a)' → 's 19(2)(a)'; None when it is not a pinpoint."""
    m = _SECTION_KEY.match(text)
    if not m:
        return None
    kind = _PINPOINT_KINDS[m["kind"].casefold()] if m["kind"] else "s"
    sub = re.sub(r"\s+", "", m["sub"] or "").casefold()
    return f"{kind} {m['num'].upper()}{sub}"


_SPELLED = {"section", "regulation", "rule", "clause"}


def _is_pinpoint(m: re.Match[str]) -> bool:
    # "… Regulation 2017" is a title ending in its year, not regulation 2017 of something.
    return not (m["kind"].casefold() in _SPELLED and re.fullmatch(r"(?:18|19|20)\d{2}", m["num"]))


def _pinpoint_of(m: re.Match[str]) -> str:
    kind = _PINPOINT_KINDS[m["kind"].casefold()]
    sub = re.sub(r"\s+", "", m["sub"] or "").casefold()
    return f"{kind} {m['num'].upper()}{sub}"


@dataclass
class Parsed:
    citation: str
    kind: str  # legislation | standard
    title: str
    jurisdiction: str | None = None
    section: str | None = None
    designation: Designation | None = None
    designation_text: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "title": self.title,
            "designation": self.designation.key if self.designation else None,
            "jurisdiction": self.jurisdiction,
            "section": self.section,
        }


def _strip_emphasis(text: str) -> str:
    return re.sub(r"(?<!\w)[*_]+|[*_]+(?!\w)", "", text)


def parse(citation: str) -> Parsed:
    # Internal spacing is kept: an exact match is literal; extra spaces only match near-exactly.
    text = _strip_emphasis(unicodedata.normalize("NFKC", citation)).strip()
    std = _parse_standard(text)
    if std is not None:
        designation, rest, written = std
        rest = rest.strip()
        section = None
        m = _PINPOINT.search(rest)
        if m:
            section, rest = _pinpoint_of(m), rest[: m.start()]
        rest = rest.strip(" ,;:-\u2013\u2014")
        return Parsed(
            citation, "standard", rest, section=section, designation=designation, designation_text=written
        )
    title, section, jurisdiction = text, None, None
    for _ in range(3):  # AGLC order is Title (Jur) Pinpoint; accept the pinpoint first too
        if jurisdiction is None and (m := _JURISDICTION.search(title)) and m.start() > 0:
            code = jurisdictions.lookup(m["j"].rstrip("."))
            if code is not None:
                jurisdiction, title = code, title[: m.start()]
                continue
        if section is None and (m := _PINPOINT.search(title)) and m.start() > 0 and _is_pinpoint(m):
            section, title = _pinpoint_of(m), title[: m.start()]
            continue
        break
    return Parsed(citation, "legislation", title.strip(" ,;"), jurisdiction=jurisdiction, section=section)


def near_key(text: str) -> str:
    """Near-exact form: case, spacing, punctuation and '&' ≡ 'and' do not matter; words and digits do."""
    s = unicodedata.normalize("NFKC", text).casefold().replace("&", " and ")
    s = re.sub(r"[\W_]+", " ", s)
    return " ".join(s.split())


# ------------------------------------------------------------------------------------------- index


@dataclass(frozen=True)
class Entry:
    doc_id: str
    type: str
    title: str
    designation: str | None
    jurisdiction: str
    status: str
    in_force_date: date | None
    last_amended_date: date | None
    repealed_date: date | None
    sections: dict[str, str]  # normalised pinpoint → section id as stored

    @property
    def canonical_title(self) -> str:
        return f"{self.designation} {self.title}" if self.designation else self.title

    def citation(self, section: str | None = None) -> str:
        base = self.designation or f"{self.title} ({jurisdictions.abbreviation(self.jurisdiction)})"
        return f"{base} {section}" if section else base

    @property
    def in_force(self) -> bool | None:
        if self.status == "repealed" or self.repealed_date is not None:
            return False
        return True if self.in_force_date is not None else None

    def candidate(self) -> dict[str, Any]:
        return {
            "docId": self.doc_id,
            "docType": self.type,
            "title": self.canonical_title,
            "jurisdiction": self.jurisdiction,
            "jurisdictionAbbreviation": jurisdictions.abbreviation(self.jurisdiction),
            "verifiedRef": self.citation(),
            "inForce": self.in_force,
        }


@dataclass
class CitationIndex:
    exact: dict[str, list[Entry]] = field(default_factory=dict)
    near: dict[str, list[Entry]] = field(default_factory=dict)
    std_exact: dict[str, list[Entry]] = field(default_factory=dict)
    std_near: dict[str, list[Entry]] = field(default_factory=dict)
    generation: str | None = None
    size: int = 0

    @classmethod
    def build(cls, entries: list[Entry], generation: str | None = None) -> CitationIndex:
        idx = cls(generation=generation, size=len(entries))
        for e in entries:
            if e.designation:
                d = parse_designation(e.designation)
                idx.std_exact.setdefault(e.designation, []).append(e)
                idx.std_near.setdefault(d.key if d else near_key(e.designation), []).append(e)
            else:
                idx.exact.setdefault(e.title, []).append(e)
                idx.near.setdefault(near_key(e.title), []).append(e)
        return idx


def section_map(section_ids: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for sid in section_ids:
        out.setdefault(normalise_section(sid) or sid.strip().casefold(), sid)
    return out


async def load_entries(session: AsyncSession) -> list[Entry]:
    sections: dict[str, list[str]] = {}
    for doc_id, sid in await session.execute(
        select(LegislationSection.doc_id, LegislationSection.section_id)
    ):
        sections.setdefault(doc_id, []).append(sid)
    rows = await session.execute(
        select(
            LegislationDoc.id,
            LegislationDoc.type,
            LegislationDoc.title,
            LegislationDoc.designation,
            LegislationDoc.jurisdiction,
            LegislationDoc.status,
            LegislationDoc.in_force_date,
            LegislationDoc.last_amended_date,
            LegislationDoc.repealed_date,
        )
    )
    return [Entry(*row, sections=section_map(sections.get(row[0], []))) for row in rows]


class IndexHolder:
    """One process's index, rebuilt lazily when the store's generation changes.

    `changes` answers a token that changes whenever anything commits where this process would hear of it
    at once (its machine); when it moved, the store's generation is checked before the next lookup rather
    than up to REFRESH_SECONDS later."""

    def __init__(self, changes: Callable[[], Hashable] | None = None) -> None:
        self.index = CitationIndex()
        self._stale = True
        self._checked = 0.0
        self._changes = changes
        self._seen: Hashable = None
        self._lock = asyncio.Lock()

    def mark_stale(self) -> None:
        self._stale = True

    def _due(self) -> bool:
        if self._stale or time.monotonic() - self._checked >= REFRESH_SECONDS:
            return True
        return self._changes is not None and self._changes() != self._seen

    async def current(self, session: AsyncSession) -> CitationIndex:
        if not self._due():
            return self.index
        async with self._lock:
            if self._due():
                seen = self._changes() if self._changes is not None else None  # before the read below
                gen = await session.scalar(
                    select(LegislationState.generation).where(LegislationState.id == 1)
                )
                if self._stale or gen != self.index.generation:
                    self._stale = False
                    self.index = CitationIndex.build(await load_entries(session), gen)
                self._checked = time.monotonic()
                self._seen = seen
        return self.index


# ------------------------------------------------------------------------------------------ resolve


def _not_resolved(parsed: Parsed, detail: str, hint: str) -> NotFound:
    return NotFound(
        detail,
        code="citation_not_resolved",
        resolved=False,
        citation=parsed.citation,
        parsed=parsed.to_dict(),
        hint=hint,
    )


def _pick_section(entry: Entry, wanted: str | None) -> str | None:
    """The stored section for the pinpoint; s 19(2)(a) falls back to s 19(2), then s 19 (the most
    specific unit the store can verify). None when not even the section is stored."""
    if not wanted:
        return None
    key = wanted
    while True:
        if key in entry.sections:
            return entry.sections[key]
        shorter = re.sub(r"\([^()]*\)$", "", key)
        if shorter == key:
            return None
        key = shorter


def _result(entry: Entry, parsed: Parsed, tier: str) -> dict[str, Any]:
    section = _pick_section(entry, parsed.section)
    return {
        "resolved": True,
        "citation": parsed.citation,
        "docId": entry.doc_id,
        "docType": entry.type,
        "sectionRef": section,
        "requestedSection": parsed.section,
        "canonicalTitle": entry.canonical_title,
        "verifiedRef": entry.citation(section),
        "inForce": entry.in_force,
        "inForceDate": entry.in_force_date.isoformat() if entry.in_force_date else None,
        "lastAmendedDate": entry.last_amended_date.isoformat() if entry.last_amended_date else None,
        "repealedDate": entry.repealed_date.isoformat() if entry.repealed_date else None,
        "matchTier": tier,
        "jurisdiction": entry.jurisdiction,
        "source": "legislation",
        "free": True,
    }


def _choose(parsed: Parsed, tiers: list[tuple[str, list[Entry]]]) -> tuple[str, list[Entry]] | None:
    """The first tier with a match in the cited jurisdiction (or in any, when none is cited)."""
    for tier, entries in tiers:
        if parsed.jurisdiction:
            entries = [e for e in entries if e.jurisdiction == parsed.jurisdiction]
        if entries:
            return tier, entries
    return None


def _standard_titles(title: str) -> set[str]:
    """A designation may be followed by the standard's title, in full or without its parenthetical
    ('Electrical installations' for 'Electrical installations (known as the … Wiring Rules)')."""
    return {near_key(title), near_key(title.split(" (", 1)[0])}


def resolve_legislation(index: CitationIndex, parsed: Parsed) -> dict[str, Any] | None:
    """The result for a legislation/standard match, None when the store has no such title; raises
    citation_ambiguous when several instruments share the title and the citation names no jurisdiction."""
    if parsed.kind == "standard":
        assert parsed.designation is not None
        exact = [
            e
            for e in index.std_exact.get(parsed.designation_text or "", [])
            if not parsed.title or e.title == parsed.title
        ]
        near = [
            e
            for e in index.std_near.get(parsed.designation.key, [])
            if not parsed.title or near_key(parsed.title) in _standard_titles(e.title)
        ]
        tiers = [("exact", exact), ("near-exact", near)]
    else:
        tiers = [
            ("exact", index.exact.get(parsed.title, [])),
            ("near-exact", index.near.get(near_key(parsed.title), [])),
        ]
    chosen = _choose(parsed, tiers)
    if chosen is None:
        return None
    tier, entries = chosen
    unique = {e.doc_id: e for e in entries}
    if len(unique) > 1:
        cands = sorted(
            unique.values(),
            key=lambda e: (e.jurisdiction != "AU", jurisdictions.abbreviation(e.jurisdiction), e.doc_id),
        )
        # AGLC order for parallel citations: Cth first, then the others alphabetically
        where = list(dict.fromkeys(jurisdictions.abbreviation(e.jurisdiction) for e in cands))
        raise NotFound(
            f"{len(cands)} instruments are titled {cands[0].canonical_title!r} ({', '.join(where)}); "
            "name the jurisdiction, e.g. '(" + where[0] + ")'",
            code="citation_ambiguous",
            resolved=False,
            citation=parsed.citation,
            parsed=parsed.to_dict(),
            candidates=[e.candidate() for e in cands],
            hint="add the jurisdiction in parentheses after the title, e.g. '… 2011 (NSW) s 19'",
        )
    return _result(next(iter(unique.values())), parsed, tier)


async def resolve_topic(session: AsyncSession, parsed: Parsed) -> dict[str, Any] | None:
    title = parsed.title if parsed.kind == "legislation" else parsed.citation.strip()
    key = " ".join(title.casefold().split())
    variants = {key, key.replace("&", "and"), key.replace(" and ", " & ")}
    stmt = select(Topic).where(Topic.title_key.in_(variants), Topic.status.in_(FACT_STATUSES))
    rows = list((await session.scalars(stmt)).all())
    if parsed.jurisdiction:
        rows = [t for t in rows if t.jurisdiction == parsed.jurisdiction]
    if not rows:
        return None
    if len(rows) > 1:
        raise NotFound(
            f"{len(rows)} verified topics match {title!r}",
            code="citation_ambiguous",
            resolved=False,
            citation=parsed.citation,
            parsed=parsed.to_dict(),
            candidates=[
                {
                    "docId": f"topic:{t.id}",
                    "docType": "topic",
                    "title": t.title,
                    "jurisdiction": t.jurisdiction,
                }
                for t in rows
            ],
            hint="cite the exact topic title",
        )
    topic = rows[0]
    return {
        "resolved": True,
        "citation": parsed.citation,
        "docId": f"topic:{topic.id}",
        "docType": "topic",
        "sectionRef": None,
        "requestedSection": parsed.section,
        "canonicalTitle": topic.title,
        "verifiedRef": topic.title,
        "inForce": None,
        "inForceDate": None,
        "lastAmendedDate": None,
        "repealedDate": None,
        "matchTier": "exact" if topic.title == title else "near-exact",
        "jurisdiction": topic.jurisdiction,
        "source": "topic",
        "free": True,
    }


def parse_or_400(citation: str | None) -> Parsed:
    if citation is None or not citation.strip():
        raise BadRequest(
            "citation is required, e.g. ?citation=Work Health and Safety Act 2011 (Cth) s 19",
            code="citation_required",
            field="citation",
        )
    if len(citation) > MAX_CITATION:
        raise BadRequest(
            f"citation is longer than {MAX_CITATION} characters", code="invalid_field", field="citation"
        )
    return parse(citation)


async def resolve(session: AsyncSession, holder: IndexHolder, citation: str | None) -> dict[str, Any]:
    parsed = parse_or_400(citation)
    index = await holder.current(session)
    found = resolve_legislation(index, parsed)
    if found is None:
        found = await resolve_topic(session, parsed)
    if found is not None:
        return found
    if parsed.jurisdiction and parsed.kind == "legislation":
        elsewhere = index.exact.get(parsed.title) or index.near.get(near_key(parsed.title)) or []
        if elsewhere:
            where = ", ".join(sorted({jurisdictions.abbreviation(e.jurisdiction) for e in elsewhere}))
            raise _not_resolved(
                parsed,
                f"{parsed.title!r} is not recorded for {jurisdictions.abbreviation(parsed.jurisdiction)}",
                f"the store has this title for: {where}",
            )
    wanted = parsed.designation.key if parsed.designation else parsed.title
    raise _not_resolved(
        parsed,
        f"no instrument or verified topic has the title {wanted!r}",
        "matching is exact or near-exact (case, spacing, punctuation, '&'); check the title and year",
    )
