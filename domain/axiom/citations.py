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
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.axiom import pinpoints
from domain.axiom.models import LegislationDoc, LegislationSection, LegislationState, LegislationVersion
from domain.kernel import jurisdictions
from domain.kernel.errors import BadRequest, NotFound
from domain.topics.models import Topic
from domain.topics.store import REACHED

REFRESH_SECONDS = 1.0
MAX_CITATION = 500

# ------------------------------------------------------------------------------------------ parsing

_JURISDICTION = re.compile(r"[\s,]+\(\s*(?P<j>[A-Za-z][A-Za-z.\-]{0,12})\s*\)\s*[.,;]?\s*$")
_STANDARD = re.compile(
    r"^\s*(?P<prefix>AS\s*/\s*NZS|SA\s*/\s*SNZ|AS|NZS|SA\s+HB|SA\s+TS|HB)"
    r"(?:\s+(?P<intl>ISO\s*/\s*IEC|ISO|IEC))?\s*"
    r"(?P<num>\d+(?:[.\-]\d+)*)"
    r"(?:\s*(?P<sep>[:\-\u2013\u2014])\s*(?P<year>(?:19|20)\d{2}))?"
    r"(?P<rest>(?:\s.*)?)$",
    re.IGNORECASE | re.DOTALL,
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
    """'s 19', 'S.19', 'section 19 (2)(a)', '19(2)(a)' → 's 19(2)(a)'; None when it is not a pinpoint."""
    text = text.strip()
    found = pinpoints.parse(text) or pinpoints.parse(f"s {text}")
    return found.text if found is not None else None


@dataclass
class Parsed:
    citation: str
    kind: str  # legislation | standard
    title: str
    jurisdiction: str | None = None
    section: str | None = None
    designation: Designation | None = None
    designation_text: str | None = None
    pinpoint: pinpoints.Pinpoint | None = None


def _strip_emphasis(text: str) -> str:
    return re.sub(r"(?<!\w)[*_]+|[*_]+(?!\w)", "", text)


def parse(citation: str) -> Parsed:
    # Internal spacing is kept: an exact match is literal; extra spaces only match near-exactly.
    text = _strip_emphasis(unicodedata.normalize("NFKC", citation)).strip()
    std = _parse_standard(text)
    if std is not None:
        designation, rest, written = std
        rest = rest.strip()
        pin = None
        if split := pinpoints.split_trailing(" " + rest):
            rest, pin = split
        rest = rest.strip(" ,;:-\u2013\u2014")
        return Parsed(
            citation,
            "standard",
            rest,
            section=pin.text if pin else None,
            designation=designation,
            designation_text=written,
            pinpoint=pin,
        )
    title, pin, jurisdiction = text, None, None
    for _ in range(3):  # AGLC order is Title (Jur) Pinpoint; accept the pinpoint first too
        if jurisdiction is None and (m := _JURISDICTION.search(title)) and m.start() > 0:
            code = jurisdictions.lookup(m["j"].rstrip("."))
            if code is not None:
                jurisdiction, title = code, title[: m.start()]
                continue
        if pin is None and (split := pinpoints.split_trailing(title)):
            title, pin = split
            continue
        break
    return Parsed(
        citation,
        "legislation",
        title.strip(" ,;"),
        jurisdiction=jurisdiction,
        section=pin.text if pin else None,
        pinpoint=pin,
    )


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
    version_date: date | None
    sections: dict[str, str]  # normalised pinpoint → section id as stored (with its reg/r alias)

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


@dataclass
class CitationIndex:
    exact: dict[str, list[Entry]] = field(default_factory=dict)
    near: dict[str, list[Entry]] = field(default_factory=dict)
    std_exact: dict[str, list[Entry]] = field(default_factory=dict)
    std_near: dict[str, list[Entry]] = field(default_factory=dict)
    # For hints only, never for resolving: titles without their year, designations without prefix and year.
    stems: dict[str, list[Entry]] = field(default_factory=dict)
    std_numbers: dict[str, list[Entry]] = field(default_factory=dict)
    generation: str | None = None
    size: int = 0

    @classmethod
    def build(cls, entries: list[Entry], generation: str | None = None) -> CitationIndex:
        idx = cls(generation=generation, size=len(entries))
        # AGLC order (Cth first, then by abbreviation), so candidates and hints list alike on every database
        order = sorted(
            entries,
            key=lambda e: (
                e.jurisdiction != "AU",
                jurisdictions.abbreviation(e.jurisdiction),
                e.title,
                e.doc_id,
            ),
        )
        for e in order:
            if e.designation:
                d = parse_designation(e.designation)
                idx.std_exact.setdefault(e.designation, []).append(e)
                idx.std_near.setdefault(d.key if d else near_key(e.designation), []).append(e)
                if d is not None:
                    idx.std_numbers.setdefault(_number_key(d), []).append(e)
            else:
                idx.exact.setdefault(e.title, []).append(e)
                idx.near.setdefault(near_key(e.title), []).append(e)
                idx.stems.setdefault(_stem(e.title), []).append(e)
        return idx


_INTERNATIONAL = re.compile(
    r"^\s*(?P<intl>ISO\s*/\s*IEC|ISO|IEC)\s*(?P<num>\d+(?:[.\-]\d+)*)(?:\s*[:\-]\s*(?:19|20)\d{2})?\s*$",
    re.IGNORECASE,
)


def _stem(title: str) -> str:
    """A title without its year: 'Corporations Act 2001' → 'corporations act'."""
    return re.sub(r"\s*\b(?:18|19|20)\d{2}\b\s*$", "", near_key(title))


def _number_key(d: Designation) -> str:
    return f"{d.international or ''} {d.number}".strip()


# A regulation's provision is `reg 5` and a rule's `r 5` (AGLC4 3.4), but people write either: each is
# accepted for the other, and the answer names the one stored (docs/decisions.md).
_ALIASES = (("reg ", "r "), ("r ", "reg "))


def pinpoint_alias(key: str) -> str | None:
    """'reg 5(1)' → 'r 5(1)', 'r 5' → 'reg 5': the other spelling of a regulation's or rule's pinpoint."""
    for written, other in _ALIASES:
        if key.startswith(written):
            return other + key[len(written) :]
    return None


def section_map(section_ids: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for sid in section_ids:
        out.setdefault(normalise_section(sid) or sid.strip().casefold(), sid)
    for key, sid in list(out.items()):
        alias = pinpoint_alias(key)
        if alias is not None:
            out.setdefault(alias, sid)  # a pinpoint stored under both spellings keeps its own
    return out


def _answered(form: str, sid: str) -> str:
    """The verified pinpoint as answered: the stored spelling when the request used the other one."""
    stored = normalise_section(sid)
    return stored if stored is not None and pinpoint_alias(form) == stored else form


async def load_entries(session: AsyncSession, doc_id: str | None = None) -> list[Entry]:
    """Every instrument's index entry (or only `doc_id`'s)."""
    sections: dict[str, list[str]] = {}
    section_rows = select(LegislationSection.doc_id, LegislationSection.section_id)
    if doc_id is not None:
        section_rows = section_rows.where(LegislationSection.doc_id == doc_id)
    for owner, sid in await session.execute(section_rows):
        sections.setdefault(owner, []).append(sid)
    docs = select(
        LegislationDoc.id,
        LegislationDoc.type,
        LegislationDoc.title,
        LegislationDoc.designation,
        LegislationDoc.jurisdiction,
        LegislationDoc.status,
        LegislationDoc.in_force_date,
        LegislationDoc.last_amended_date,
        LegislationDoc.repealed_date,
        LegislationDoc.version_date,
    )
    if doc_id is not None:
        docs = docs.where(LegislationDoc.id == doc_id)
    rows = await session.execute(docs)
    return [Entry(*row[:10], sections=section_map(sections.get(row[0], []))) for row in rows]


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


def _not_resolved(parsed: Parsed, detail: str, hint: str, suggestions: list[str] | None = None) -> NotFound:
    return NotFound(
        detail,
        code="citation_not_resolved",
        resolved=False,
        citation=parsed.citation,
        parsed=parsed,
        hint=hint,
        suggestions=suggestions or [],
    )


@dataclass(frozen=True)
class Verified:
    section_ref: str | None  # the stored section id of the longest verified part
    pinpoint: str | None  # that part in canonical form (a whole range or list when every item is stored)
    unverified: str | None  # what of the requested pinpoint was not verified


def verify(entry: Entry, pin: pinpoints.Pinpoint | None) -> Verified:
    """How much of the pinpoint the store verifies: s 180(1)(a) falls back to s 180(1), then s 180; a range
    or list is verified whole only when each of its ends and items is stored."""
    if pin is None:
        return Verified(None, None, None)
    units = pin.units()
    if pin.is_range_or_list and all(u in entry.sections for u in units):
        whole = " ".join(level.text for level in pin.levels)
        return Verified(entry.sections[units[0]], whole, pin.text[len(whole) :].strip() or None)
    for form in pinpoints.trimmed(units[0]):
        if form in entry.sections:
            rest = pin.text[len(form) :].strip() if pin.text.startswith(form) else pin.text
            if pin.is_range_or_list:
                rest = pin.text
            sid = entry.sections[form]
            return Verified(sid, _answered(form, sid), rest or None)
    return Verified(None, None, pin.text)


@dataclass(frozen=True)
class Resolved:
    """A citation resolved to an instrument (source "legislation") or a verified topic (source "topic")."""

    citation: str  # as parsed
    doc_id: str  # the instrument's id, or topic: and the topic's id
    doc_type: str
    section_ref: str | None
    requested_section: str | None
    unverified_pinpoint: str | None
    canonical_title: str
    verified_ref: str
    in_force: bool | None
    in_force_date: date | None
    last_amended_date: date | None
    repealed_date: date | None
    match_tier: str
    jurisdiction: str | None
    source: str
    as_at: date | None
    version_date: date | None


def _result(entry: Entry, parsed: Parsed, tier: str, as_at: date | None = None) -> Resolved:
    verified = verify(entry, parsed.pinpoint)
    return Resolved(
        citation=parsed.citation,
        doc_id=entry.doc_id,
        doc_type=entry.type,
        section_ref=verified.section_ref,
        requested_section=parsed.section,
        unverified_pinpoint=verified.unverified,
        canonical_title=entry.canonical_title,
        verified_ref=entry.citation(verified.pinpoint),
        in_force=entry.in_force,
        in_force_date=entry.in_force_date,
        last_amended_date=entry.last_amended_date,
        repealed_date=entry.repealed_date,
        match_tier=tier,
        jurisdiction=entry.jurisdiction,
        source="legislation",
        as_at=as_at,
        version_date=entry.version_date,
    )


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


def resolve_legislation(index: CitationIndex, parsed: Parsed) -> Resolved | None:
    """The result for a legislation/standard match, None when the store has no such title; raises
    citation_ambiguous when several instruments share the title and the citation names no jurisdiction."""
    found = find_legislation(index, parsed)
    return None if found is None else _result(found[0], parsed, found[1])


def find_legislation(index: CitationIndex, parsed: Parsed) -> tuple[Entry, str] | None:
    """The instrument a legislation/standard citation names and its match tier (see resolve_legislation)."""
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
            parsed=parsed,
            candidates=cands,  # the Entry records: the web layer writes them (web/hub/axiom/schemas.py)
            hint="add the jurisdiction in parentheses after the title, e.g. '… 2011 (NSW) s 19'",
        )
    return next(iter(unique.values())), tier


def _on(value: Any) -> date | None:
    return date.fromisoformat(value) if isinstance(value, str) else None


async def compilation_at(session: AsyncSession, entry: Entry, as_at: date) -> Entry:
    """The instrument as the compilation in force at `as_at` stood: the current one when its version date is
    on or before it (or unknown), else the latest kept version on or before it (its sections and dates);
    404 version_not_found when none is stored that early. A kept version is never rewritten, so a citation
    verified at a date resolves to the same section whatever is imported later."""
    if entry.version_date is None or entry.version_date <= as_at:
        return entry
    row = (
        await session.execute(
            select(LegislationVersion.version_date, LegislationVersion.snapshot)
            .where(LegislationVersion.doc_id == entry.doc_id, LegislationVersion.version_date <= as_at)
            .order_by(LegislationVersion.version_date.desc(), LegislationVersion.id.desc())
            .limit(1)
        )
    ).first()
    if row is None:
        raise NotFound(
            f"no compilation of {entry.canonical_title} as at {as_at.isoformat()} is stored "
            f"(the earliest stored is later)",
            code="version_not_found",
            field="asAt",
            docId=entry.doc_id,
            hint=f"GET /api/axiom/legislation/{entry.doc_id} lists the compilation dates stored in versions",
        )
    version_date: date | None = row[0]
    snap: dict[str, Any] = row[1]
    return replace(
        entry,
        version_date=version_date,
        status=str(snap.get("status") or entry.status),
        in_force_date=_on(snap.get("inForceDate")),
        last_amended_date=_on(snap.get("lastAmendedDate")),
        repealed_date=_on(snap.get("repealedDate")),
        sections=section_map([s["sectionId"] for s in snap.get("sections", [])]),
    )


@dataclass(frozen=True)
class TopicCandidate:
    """A verified topic a citation's title names, one of several (citation_ambiguous)."""

    topic_id: str
    title: str
    jurisdiction: str | None


async def resolve_topic(session: AsyncSession, parsed: Parsed, as_at: date | None = None) -> Resolved | None:
    title = parsed.title if parsed.kind == "legislation" else parsed.citation.strip()
    key = " ".join(title.casefold().split())
    variants = {key, key.replace("&", "and"), key.replace(" and ", " & ")}
    stmt = select(Topic).where(Topic.title_key.in_(variants), Topic.status.in_(REACHED))
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
            parsed=parsed,
            candidates=[TopicCandidate(t.id, t.title, t.jurisdiction) for t in rows],
            hint="cite the exact topic title",
        )
    topic = rows[0]
    return Resolved(
        citation=parsed.citation,
        doc_id=f"topic:{topic.id}",
        doc_type="topic",
        section_ref=None,
        requested_section=parsed.section,
        unverified_pinpoint=parsed.section,
        canonical_title=topic.title,
        verified_ref=topic.title,
        in_force=None,
        in_force_date=None,
        last_amended_date=None,
        repealed_date=None,
        match_tier="exact" if topic.title == title else "near-exact",
        jurisdiction=topic.jurisdiction,
        source="topic",
        as_at=as_at,
        version_date=None,
    )


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


async def resolve(
    session: AsyncSession, holder: IndexHolder, citation: str | None, *, as_at: date | None = None
) -> Resolved:
    """With `as_at`, a legislation pinpoint is verified against the compilation in force at that date."""
    parsed = parse_or_400(citation)
    index = await holder.current(session)
    match = find_legislation(index, parsed)
    if match is not None:
        entry, tier = match
        if as_at is not None:
            entry = await compilation_at(session, entry, as_at)
        return _result(entry, parsed, tier, as_at)
    found = await resolve_topic(session, parsed, as_at)
    if found is not None:
        return found
    if parsed.jurisdiction and parsed.kind == "legislation":
        elsewhere = index.exact.get(parsed.title) or index.near.get(near_key(parsed.title)) or []
        if elsewhere:
            where = ", ".join(sorted({jurisdictions.abbreviation(e.jurisdiction) for e in elsewhere}))
            hint = f"the store has this title for: {where}"
            local = [
                e for e in index.stems.get(_stem(parsed.title), []) if e.jurisdiction == parsed.jurisdiction
            ]
            if local:  # Crimes Act 1900 (Vic): Victoria's is the Crimes Act 1958
                hint += f"; for {jurisdictions.abbreviation(parsed.jurisdiction)}: " + "; ".join(
                    e.citation() for e in local
                )
            raise _not_resolved(
                parsed,
                f"{parsed.title!r} is not recorded for {jurisdictions.abbreviation(parsed.jurisdiction)}",
                hint,
                list(dict.fromkeys(e.citation() for e in [*local, *elsewhere])),
            )
    near_misses = _near_misses(index, parsed)
    if near_misses is not None:
        detail, hint, suggestions = near_misses
        raise _not_resolved(parsed, detail, hint, suggestions)
    wanted = parsed.designation.key if parsed.designation else parsed.title
    raise _not_resolved(
        parsed,
        f"no instrument or verified topic has the title {wanted!r}",
        "matching is exact or near-exact (case, spacing, punctuation, '&'); check the title and year",
    )


def _near_misses(index: CitationIndex, parsed: Parsed) -> tuple[str, str, list[str]] | None:
    """What the citation nearly names, to say so in the 404 (never resolved): the joint or other edition of
    a standard, the same title in another year or with the year left out."""
    if parsed.designation is not None:
        d = parsed.designation
        others = sorted(  # newest edition first
            (e for e in index.std_numbers.get(_number_key(d), []) if e.designation),
            key=lambda e: -int(getattr(parse_designation(str(e.designation)), "year", None) or 0),
        )
        if not others:
            return None
        names = list(dict.fromkeys(str(e.designation) for e in others))
        editions = [o for e in others if (o := parse_designation(str(e.designation))) is not None]
        same_edition = [o.key for o in editions if o.prefix != d.prefix and o.year == d.year]
        if same_edition:
            hint = (
                f"{d.key} is not recorded; did you mean {' or '.join(same_edition)}? (the prefix is part of "
                "the designation: AS, AS/NZS and NZS name different publications)"
            )
        elif d.year is None:
            hint = f"name the edition: {', '.join(names)}"
        else:
            hint = f"{d.key} is not recorded; the store has {', '.join(names)}"
        return f"no standard is designated {d.key!r}", hint, names
    if m := _INTERNATIONAL.match(parsed.title):
        # ISO 31000:2018 as cited abroad: Australia publishes its adoption as AS ISO … or AS/NZS ISO …
        intl = re.sub(r"\s*/\s*", "/", m["intl"].upper())
        number = f"{intl} {m['num']}"
        adopted = [str(e.designation) for e in index.std_numbers.get(number, []) if e.designation]
        if adopted:
            names = list(dict.fromkeys(adopted))
            hint = f"the store records its Australian adoption: {', '.join(names)}"
            return f"no standard is designated {parsed.title!r}", hint, names
    wanted_stem = _stem(parsed.title)
    others = index.stems.get(wanted_stem, [])
    if parsed.jurisdiction:
        others = [e for e in others if e.jurisdiction == parsed.jurisdiction] or others
    if not others or not wanted_stem:
        return None
    names = list(dict.fromkeys(e.citation() for e in others))[:8]
    if _stem(parsed.title) == near_key(parsed.title):
        hint = f"add the year (and the jurisdiction): {'; '.join(names)}"
    else:
        hint = f"no instrument of that year; the store has {'; '.join(names)}"
    return f"no instrument or verified topic has the title {parsed.title!r}", hint, names
