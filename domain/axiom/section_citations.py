"""Topics citing imported legislation (issue 34).

A proposal's citation that starts with `legislation:` names a section of an imported instrument, either by
the instrument's id or in the resolver's citation form, optionally as at a date:

    legislation:nsw-widget-act-2031 s 7(1)
    legislation:Widget Act 2031 (NSW) s 7(1)
    legislation:Widget Act 2031 (NSW) s 7(1) @2031-06-30

It is verified when proposed: the instrument exists, the pinpoint names one provision and every part of it
is stored in the compilation in force at the date (today's compilation without one); otherwise the proposal
is refused with a 400 naming the citation and what is wrong. It is stored in one canonical form, pinned to
the compilation it was verified against — `legislation:nsw-widget-act-2031 s 7(1)@2031-01-01` (the
compilation's version date; none when the instrument has no version date) — so a later import never changes
what it names: the kept version answers for that date. Other citations (URLs, free text) are kept as sent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.axiom import citations, pinpoints
from domain.axiom.legislation import DOC_ID, citation_of
from domain.axiom.models import LegislationDoc, LegislationSection, LegislationVersion
from domain.kernel import jurisdictions
from domain.kernel.errors import BadRequest, NotFound

PREFIX = "legislation:"
K = TypeVar("K")
_FORM = re.compile(r"^legislation:\s*(?P<ref>.*?)\s*(?:@\s*(?P<at>[^@\s]*))?\s*$", re.DOTALL)
EXAMPLE = (
    "legislation:<instrument id> s 7(1), or legislation:Widget Act 2031 (NSW) s 7(1), optionally @YYYY-MM-DD"
)


@dataclass(frozen=True)
class SectionCitation:
    doc_id: str
    section_id: str
    version_date: date | None

    @property
    def text(self) -> str:
        at = f"@{self.version_date.isoformat()}" if self.version_date else ""
        return f"{PREFIX}{self.doc_id} {self.section_id}{at}"


def is_legislation(citation: str) -> bool:
    return citation.startswith(PREFIX)


def stored(citation: str) -> SectionCitation | None:
    """A stored (canonical) legislation citation read back; None for any other citation."""
    m = _FORM.match(citation)
    if m is None or not is_legislation(citation):
        return None
    doc_id, _, section_id = m["ref"].partition(" ")
    try:
        at = date.fromisoformat(m["at"]) if m["at"] else None
    except ValueError:
        return None
    return SectionCitation(doc_id, section_id, at) if section_id else None


def _refused(index: int, citation: str, why: str, **extra: Any) -> BadRequest:
    return BadRequest(
        f"citations[{index}] {citation!r}: {why}",
        code="invalid_citation",
        field="citations",
        example=EXAMPLE,
        **extra,
    )


async def _entry(
    session: AsyncSession, holder: citations.IndexHolder, ref: str
) -> tuple[citations.Entry, pinpoints.Pinpoint | None] | None:
    """The instrument and pinpoint a reference names: `<id> <pinpoint>` first, else the citation form."""
    first, _, rest = ref.partition(" ")
    if DOC_ID.match(first) and (found := await citations.load_entries(session, first)):
        return found[0], pinpoints.parse(rest.strip()) if rest.strip() else None
    parsed = citations.parse(ref)
    match = citations.find_legislation(await holder.current(session), parsed)
    return (match[0], parsed.pinpoint) if match is not None else None


async def check(session: AsyncSession, holder: citations.IndexHolder, raw: list[str] | None) -> list[str]:
    """The citations to store: each legislation reference verified and in its canonical form (400 when it
    names no stored instrument or section), the others as sent, in order."""
    out: list[str] = []
    for i, citation in enumerate(raw or []):
        if is_legislation(citation):
            citation = (await _verify(session, holder, i, citation)).text
        out.append(citation)
    return out


async def _verify(
    session: AsyncSession, holder: citations.IndexHolder, i: int, citation: str
) -> SectionCitation:
    m = _FORM.match(citation)
    ref = m["ref"] if m else ""
    if not ref:
        raise _refused(i, citation, "name an instrument and a section")
    as_at = None
    if m and m["at"] is not None:
        try:
            as_at = date.fromisoformat(m["at"])
        except ValueError:
            raise _refused(i, citation, f"{m['at']!r} after @ is not a date (YYYY-MM-DD)") from None
    try:
        found = await _entry(session, holder, ref)
    except NotFound as e:  # citation_ambiguous: several jurisdictions hold the title
        raise _refused(i, citation, e.detail, candidates=e.extra.get("candidates", [])) from None
    if found is None:
        raise _refused(i, citation, "no imported instrument has that id or title")
    entry, pin = found
    if pin is None:
        raise _refused(i, citation, f"name a section of {entry.citation()}, e.g. 's 1'")
    if pin.is_range_or_list:
        raise _refused(i, citation, "cite one provision, not a range or list (one citation each)")
    if as_at is not None:
        try:
            entry = await citations.compilation_at(session, entry, as_at)
        except NotFound as e:
            raise _refused(i, citation, e.detail) from None
    verified = citations.verify(entry, pin)
    if verified.section_ref is None or verified.unverified is not None:
        when = f"as at {as_at.isoformat()}" if as_at else "in its current compilation"
        raise _refused(
            i,
            citation,
            f"{entry.citation()} has no {pin.text} {when}",
            sectionRef=verified.section_ref,
        )
    return SectionCitation(entry.doc_id, verified.section_ref, entry.version_date)


@dataclass(frozen=True)
class CitedSection:
    """A stored legislation citation and what it names in the compilation it was verified against; the
    instrument's facts are None when it is no longer stored."""

    citation: str
    doc_id: str
    section_ref: str
    version_date: date | None
    title: str | None
    jurisdiction: str | None
    jurisdiction_abbreviation: str | None
    verified_ref: str | None
    section_title: str | None
    current: bool


async def describe(session: AsyncSession, cited: Sequence[tuple[K, str]]) -> list[tuple[K, CitedSection]]:
    """Each stored legislation citation with what it names, read from the compilation it was verified
    against: `cited` pairs what the caller keeps of the citing item (its proposal) with the stored citation;
    the pairs come back in order, those that are not legislation citations left out."""
    parsed = [(key, c, s) for key, c in cited if (s := stored(c)) is not None]
    ids = sorted({s.doc_id for _, _, s in parsed})
    docs = {d.id: d for d in await session.scalars(select(LegislationDoc).where(LegislationDoc.id.in_(ids)))}
    headings: dict[tuple[str, str], str] = {}
    wanted = [(s.doc_id, s.section_id) for _, _, s in parsed]
    if wanted:
        for doc_id, sid, title in await session.execute(
            select(LegislationSection.doc_id, LegislationSection.section_id, LegislationSection.title).where(
                LegislationSection.doc_id.in_(ids),
                LegislationSection.section_id.in_(sorted({sid for _, sid in wanted})),
            )
        ):
            headings[(doc_id, sid)] = title
    out = []
    for key, text, s in parsed:
        doc = docs.get(s.doc_id)
        heading = None
        if doc is not None:
            current = s.version_date is None or doc.version_date == s.version_date
            heading = headings.get((s.doc_id, s.section_id)) if current else await _kept_heading(session, s)
        section = CitedSection(
            citation=text,
            doc_id=s.doc_id,
            section_ref=s.section_id,
            version_date=s.version_date,
            title=doc.title if doc else None,
            jurisdiction=doc.jurisdiction if doc else None,
            jurisdiction_abbreviation=jurisdictions.abbreviation(doc.jurisdiction) if doc else None,
            verified_ref=citation_of(doc, s.section_id) if doc else None,
            section_title=heading,
            current=doc is not None and (s.version_date is None or doc.version_date == s.version_date),
        )
        out.append((key, section))
    return out


async def _kept_heading(session: AsyncSession, s: SectionCitation) -> str | None:
    snap: dict[str, Any] | None = await session.scalar(
        select(LegislationVersion.snapshot)
        .where(LegislationVersion.doc_id == s.doc_id, LegislationVersion.version_date == s.version_date)
        .order_by(LegislationVersion.id.desc())
        .limit(1)
    )
    for section in (snap or {}).get("sections", []):
        if section.get("sectionId") == s.section_id:
            return str(section.get("title"))
    return None
