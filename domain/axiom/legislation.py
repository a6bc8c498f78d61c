"""The legislation store: ingest (upsert) of instruments, listing, reading, Markdown and keyword search."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass, replace
from datetime import date, datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from sqlalchemy import delete, func, insert, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.axiom import legislation_queries
from domain.axiom.citations import normalise_section, parse_designation, section_map
from domain.axiom.models import (
    LegislationAmendment,
    LegislationDoc,
    LegislationSection,
    LegislationState,
    LegislationVersion,
)
from domain.axiom.provenance import Register
from domain.kernel import audit, jurisdictions, sqlutil
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.db import table_of
from domain.kernel.errors import BadRequest, NotFound
from domain.kernel.vocabulary import SpeltOut


class InstrumentType(StrEnum):
    ACT = "act"
    REGULATION = "regulation"
    STANDARD = "standard"
    GUIDANCE = "guidance"


class SectionStatus(StrEnum):
    IN_FORCE = "in_force"
    REPEALED = "repealed"
    NOT_YET_COMMENCED = "not_yet_commenced"


class InstrumentStatus(StrEnum):
    """A section's statuses, and an instrument's own: superseded by a later one."""

    IN_FORCE = "in_force"
    REPEALED = "repealed"
    NOT_YET_COMMENCED = "not_yet_commenced"
    SUPERSEDED = "superseded"


# Request and response fields: each vocabulary's values written out in the field's schema.
InstrumentTypeField = Annotated[InstrumentType, SpeltOut(InstrumentType)]
SectionStatusField = Annotated[SectionStatus, SpeltOut(SectionStatus)]
InstrumentStatusField = Annotated[InstrumentStatus, SpeltOut(InstrumentStatus)]
INCLUDES = ("sections", "amendments")
DOC_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{1,119}$")
MAX_SEARCH_CANDIDATES = 5000


class SectionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sectionId: str = Field(min_length=1, max_length=60, description="Pinpoint id such as 's 19' or 'reg 5'")
    title: str = Field(min_length=1, max_length=500, description="The section heading")
    content: str | None = Field(default=None, max_length=200_000)
    depth: int = Field(default=1, ge=1, le=10)
    parentId: str | None = Field(default=None, max_length=60)
    order: int | None = Field(default=None, ge=0, le=2_147_483_647)  # an INTEGER column
    status: SectionStatusField = SectionStatus.IN_FORCE
    amendedBy: str | None = Field(default=None, max_length=300)
    notes: str | None = Field(default=None, max_length=10_000)
    crossReferences: list[str] = Field(default_factory=list, max_length=200)


class AmendmentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1, max_length=500, description="Title of the amending instrument")
    id: str | None = Field(default=None, max_length=120)
    commenced: date | None = None
    description: str | None = Field(default=None, max_length=10_000)
    sections: list[str] = Field(default_factory=list, max_length=500)


class ProvenanceIn(BaseModel):
    """Where an instrument's text came from (returned on the instrument and each of its sections)."""

    model_config = ConfigDict(extra="forbid")
    sourceRegister: Register = Field(
        description="The register or corpus read (sample: Concord's seeded sample)"
    )
    source: str | None = Field(default=None, max_length=1000, description="The URL or file read")
    versionDate: date | None = Field(default=None, description="The compilation's (version's) date")
    licence: str | None = Field(default=None, max_length=60, description="e.g. CC BY 4.0")
    attribution: str | None = Field(default=None, max_length=1000, description="The credit the licence asks")


class InstrumentIn(BaseModel):
    """One instrument as staff ingest it (JSON)."""

    model_config = ConfigDict(extra="forbid")
    id: str | None = Field(
        default=None, description="Stable id ([a-z0-9._-]); default: jurisdiction + title slug"
    )
    jurisdiction: str = Field(
        description="AU, AU-NSW … or an AGLC abbreviation (Cth, NSW …), as written",
        json_schema_extra={"enum": list(jurisdictions.SPELLINGS)},
    )
    type: InstrumentTypeField
    title: str = Field(
        min_length=3, max_length=500, description="Title; for standards the name after the designation"
    )
    designation: str | None = Field(
        default=None, max_length=120, description="Standards: 'AS/NZS 3000:2018', 'AS 1170.4-2007'"
    )
    shortTitle: str | None = Field(default=None, max_length=200)
    year: int | None = Field(default=None, ge=1800, le=2200)
    number: str | None = Field(default=None, max_length=40)
    registerId: str | None = Field(default=None, max_length=60)
    status: InstrumentStatusField = InstrumentStatus.IN_FORCE
    inForceDate: date | None = None
    lastAmendedDate: date | None = None
    repealedDate: date | None = None
    administeredBy: str | None = Field(default=None, max_length=300)
    url: str | None = Field(default=None, max_length=1000)
    provenance: ProvenanceIn | None = None
    sections: list[SectionIn] = Field(default_factory=list, max_length=20_000)
    amendments: list[AmendmentIn] = Field(default_factory=list, max_length=1000)

    @field_validator("jurisdiction")
    @classmethod
    def _jurisdiction(cls, v: str) -> str:
        code = jurisdictions.exact(v)
        if code is None:
            raise ValueError(f"must be {jurisdictions.ALLOWED}")
        return code

    @field_validator("id")
    @classmethod
    def _id(cls, v: str | None) -> str | None:
        if v is not None and not DOC_ID.match(v):
            raise ValueError("must be 2-120 characters of a-z, 0-9, '.', '_' or '-', starting alphanumeric")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> InstrumentIn:
        if self.type == InstrumentType.STANDARD and not self.designation:
            raise ValueError("designation is required for a standard (e.g. 'AS/NZS 3000:2018')")
        if self.designation:
            if parse_designation(self.designation) is None:
                raise ValueError(f"designation {self.designation!r} is not a standards designation")
        seen: set[str] = set()
        for s in self.sections:
            if s.sectionId in seen:
                raise ValueError(f"section {s.sectionId!r} appears twice")
            seen.add(s.sectionId)
        if self.repealedDate and self.status == InstrumentStatus.IN_FORCE:
            self.status = InstrumentStatus.REPEALED
        return self


class IngestBody(BaseModel):
    model_config = ConfigDict(extra="ignore")  # a file may carry source/attribution notes
    documents: list[InstrumentIn] = Field(min_length=1, max_length=1000)


def parse_documents(data: Any) -> list[InstrumentIn]:
    """Validate an ingest payload (parsed JSON): {documents: [...]}, a list, or a single instrument. Strictly,
    as the API's bodies are: no value is coerced from another JSON type (`0` is not a date, `"5"` not an
    integer), so what the documented schema admits is what ingest accepts."""
    if isinstance(data, list):
        data = {"documents": data}
    elif isinstance(data, dict) and "documents" not in data:
        data = {"documents": [data]}
    try:
        return IngestBody.model_validate_json(json.dumps(data), strict=True).documents
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise BadRequest(f"{loc}: {err['msg']}", code="validation_error", field=loc) from None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")


def default_id(doc: InstrumentIn) -> str:
    if doc.type == "standard" and doc.designation:
        return ("std-" + _slug(doc.designation))[:120]
    prefix = "cth" if doc.jurisdiction == "AU" else doc.jurisdiction.split("-", 1)[1].lower()
    return f"{prefix}-{_slug(doc.title)}"[:120].rstrip("-")


async def bump_generation(session: AsyncSession) -> None:
    stmt = sqlutil.insert(session, LegislationState).values(id=1, generation=str(uuid.uuid4()))
    stmt = stmt.on_conflict_do_update(index_elements=["id"], set_={"generation": stmt.excluded.generation})
    await session.execute(stmt)


async def generation(session: AsyncSession) -> str | None:
    return await session.scalar(select(LegislationState.generation).where(LegislationState.id == 1))


def _values(doc: InstrumentIn, fingerprint: str) -> dict[str, Any]:
    prov = doc.provenance
    return {
        "jurisdiction": doc.jurisdiction,
        "type": doc.type,
        "title": doc.title.strip(),
        "designation": doc.designation.strip() if doc.designation else None,
        "short_title": doc.shortTitle,
        "year": doc.year,
        "number": doc.number,
        "register_id": doc.registerId,
        "status": doc.status,
        "in_force_date": doc.inForceDate,
        "last_amended_date": doc.lastAmendedDate,
        "repealed_date": doc.repealedDate,
        "administered_by": doc.administeredBy,
        "url": doc.url,
        "fingerprint": fingerprint,
        "source_register": prov.sourceRegister.value if prov else None,
        "source": prov.source if prov else None,
        "version_date": prov.versionDate if prov else None,
        "licence": prov.licence if prov else None,
        "attribution": prov.attribution if prov else None,
    }


def _sections(doc_id: str, doc: InstrumentIn) -> list[LegislationSection]:
    return [
        LegislationSection(
            doc_id=doc_id,
            section_id=s.sectionId.strip(),
            title=s.title.strip(),
            content=s.content,
            depth=s.depth,
            parent_id=s.parentId,
            order=s.order if s.order is not None else i,
            status=s.status,
            amended_by=s.amendedBy,
            notes=s.notes,
            cross_references=s.crossReferences,
        )
        for i, s in enumerate(doc.sections)
    ]


def _section_rows(doc_id: str, doc: InstrumentIn) -> list[dict[str, Any]]:
    """The sections' rows as plain values, for one executemany insert (no ORM objects: a corpus batch
    writes tens of thousands)."""
    return [
        {
            "doc_id": doc_id,
            "section_id": s.sectionId.strip(),
            "title": s.title.strip(),
            "content": s.content,
            "depth": s.depth,
            "parent_id": s.parentId,
            "order": s.order if s.order is not None else i,
            "status": s.status,
            "amended_by": s.amendedBy,
            "notes": s.notes,
            "cross_references": s.crossReferences,
        }
        for i, s in enumerate(doc.sections)
    ]


def _row(obj: LegislationSection | LegislationAmendment, model: type[Any]) -> dict[str, Any]:
    """A transient row's column values (its id left to the database)."""
    return {c.key: getattr(obj, c.key) for c in model.__table__.columns if c.key != "id"}


def _amendments(doc_id: str, doc: InstrumentIn) -> list[LegislationAmendment]:
    return [
        LegislationAmendment(
            doc_id=doc_id,
            amending_title=a.title,
            amending_id=a.id,
            commenced=a.commenced,
            description=a.description,
            sections=a.sections,
        )
        for a in doc.amendments
    ]


def _snapshot(
    doc: LegislationDoc, sections: list[LegislationSection], amendments: list[LegislationAmendment]
) -> dict[str, Any]:
    """An instrument as it stands, whole (facts, provenance, sections, amendments): a kept version's
    snapshot, a stored format (`_stored`)."""
    whole = Instrument.of(
        doc,
        section_count=len(sections),
        sections=[Section.of(s) for s in sorted(sections, key=lambda s: s.order)],
        amendments=[Amendment.of(a) for a in amendments],
    )
    return _stored(whole)


async def _keep_version(
    session: AsyncSession, doc_id: str, version_date: date | None, snap: dict[str, Any]
) -> None:
    session.add(
        LegislationVersion(doc_id=doc_id, version_date=version_date, snapshot=snap, created_at=utcnow())
    )


# Instruments a doc upsert writes: 500 rows of two dozen columns stay well within the bound parameters
# a statement may carry (SQLite 32,766; asyncpg 32,767).
_DOCS_A_STATEMENT = 500


@dataclass(frozen=True)
class Ingested:
    """The ids of a batch's instruments by what ingest did with each."""

    created: list[str]
    updated: list[str]
    unchanged: list[str]
    versioned: list[str]  # older compilations, kept as versions only

    @property
    def count(self) -> int:
        """Instruments created or updated."""
        return len(self.created) + len(self.updated)


async def ingest(
    session: AsyncSession, ctx: Context, docs: list[InstrumentIn], *, bulk: bool = False
) -> Ingested:
    """Upsert instruments (their sections and amendments are replaced). The doc rows are read FOR UPDATE and
    then written with INSERT … ON CONFLICT DO UPDATE, so concurrent ingests of one id serialise; the
    instruments to write are written together, a few statements for the batch.

    Full text: an ordinary ingest leaves its sections searchable when it commits, even while a bulk import
    is under way (domain/axiom/bulk.py); a bulk import's batch (`bulk`) leaves them to the import's end.

    Versions: an instrument that is replaced is first kept whole as a version (legislation_versions), so
    what an earlier citation resolved to is still there (as-at queries); a section whose text differs from
    the replaced compilation's, or that is new in it, is marked amended (amendedBy) unless the input says
    by what. A compilation older than the stored one (by provenance versionDate) is kept as a version only."""
    now = utcnow()
    created: list[str] = []
    updated: list[str] = []
    unchanged: list[str] = []
    versioned: list[str] = []
    ids = [doc.id or default_id(doc) for doc in docs]
    # One statement reads (and locks, in id order) every instrument of the batch; an id met again in the
    # same batch is read afresh after the rows written for it so far.
    stored = {
        d.id: d
        for d in await session.scalars(
            select(LegislationDoc)
            .where(LegislationDoc.id.in_(sorted(set(ids))))
            .order_by(LegislationDoc.id)
            .with_for_update()
        )
    }
    seen: set[str] = set()
    # The instruments to write are written together, not one by one: their doc rows, the replaced
    # sections and amendments gone, the new ones in (write_pending).
    doc_rows: list[dict[str, Any]] = []
    section_rows: list[dict[str, Any]] = []
    amendment_rows: list[dict[str, Any]] = []

    async def write_pending() -> None:
        """The pending instruments written: their doc rows upserted in id order (as the batch's read locks
        them, so two batches sharing ids wait for each other instead of deadlocking), then their sections
        and amendments replaced. Even an instrument read as new has them deleted: a concurrent ingest may
        have created it since (the upsert then waited for it and updated)."""
        if not doc_rows:
            return
        doc_rows.sort(key=lambda row: row["id"])
        kept = {"id", "created_at"}  # a replaced instrument keeps when it was first stored
        for start in range(0, len(doc_rows), _DOCS_A_STATEMENT):
            chunk = doc_rows[start : start + _DOCS_A_STATEMENT]
            chunk_ids = [row["id"] for row in chunk]
            stmt = sqlutil.insert(session, LegislationDoc).values(chunk)
            await session.execute(
                stmt.on_conflict_do_update(
                    index_elements=["id"],
                    set_={key: stmt.excluded[key] for key in chunk[0] if key not in kept},
                )
            )
            await session.execute(delete(LegislationSection).where(LegislationSection.doc_id.in_(chunk_ids)))
            await session.execute(
                delete(LegislationAmendment).where(LegislationAmendment.doc_id.in_(chunk_ids))
            )
        doc_rows.clear()
        # Executemany inserts: a long instrument has thousands of sections.
        if amendment_rows:
            await session.execute(insert(LegislationAmendment), amendment_rows)
            amendment_rows.clear()
        if section_rows:
            await session.execute(insert(table_of(LegislationSection)), section_rows)
            section_rows.clear()

    for doc, doc_id in zip(docs, ids, strict=True):
        fingerprint = hashlib.sha256(doc.model_dump_json(exclude={"id"}).encode()).hexdigest()
        if doc_id in seen:
            await write_pending()
            current = (
                await session.scalars(
                    select(LegislationDoc)
                    .where(LegislationDoc.id == doc_id)
                    .with_for_update()
                    .execution_options(populate_existing=True)
                )
            ).first()
        else:
            current = stored.get(doc_id)
        seen.add(doc_id)
        if current is not None and current.fingerprint == fingerprint:
            unchanged.append(doc_id)  # re-ingesting the same JSON writes nothing (seeding is idempotent)
            continue
        values = _values(doc, fingerprint)
        new_date: date | None = values["version_date"]
        if current is not None and current.version_date and new_date and new_date < current.version_date:
            known = await session.scalar(
                select(func.count())
                .select_from(LegislationVersion)
                .where(LegislationVersion.doc_id == doc_id, LegislationVersion.version_date == new_date)
            )
            if not known:
                transient = LegislationDoc(id=doc_id, created_at=now, updated_at=now, **values)
                snap = _snapshot(transient, _sections(doc_id, doc), _amendments(doc_id, doc))
                await _keep_version(session, doc_id, new_date, snap)
                versioned.append(doc_id)
            else:
                unchanged.append(doc_id)
            continue
        new_sections = _section_rows(doc_id, doc)
        if current is not None:
            old_sections = list(
                await session.scalars(select(LegislationSection).where(LegislationSection.doc_id == doc_id))
            )
            old_amendments = list(
                await session.scalars(
                    select(LegislationAmendment).where(LegislationAmendment.doc_id == doc_id)
                )
            )
            await _keep_version(
                session, doc_id, current.version_date, _snapshot(current, old_sections, old_amendments)
            )
            before = {s.section_id: s.content for s in old_sections}
            if any(before.values()) and new_date is not None:
                for sec in new_sections:
                    if sec["amended_by"] is None and (
                        sec["section_id"] not in before or before[sec["section_id"]] != sec["content"]
                    ):
                        sec["amended_by"] = f"compilation of {new_date.isoformat()}"
        doc_rows.append({"id": doc_id, "created_at": now, "updated_at": now, **values})
        section_rows.extend(new_sections)
        amendment_rows.extend(_row(a, LegislationAmendment) for a in _amendments(doc_id, doc))
        audit.record(  # its data is a stored format
            session,
            ctx,
            "legislation.ingest",
            "legislation",
            doc_id,
            after={
                "id": doc_id,
                "title": values["title"],
                "jurisdiction": doc.jurisdiction,
                "type": doc.type,
                "sections": len(doc.sections),
                "amendments": len(doc.amendments),
                "versionDate": new_date.isoformat() if new_date else None,
            },
        )
        (updated if current is not None else created).append(doc_id)
    await write_pending()
    await session.flush()
    if not bulk and (created or updated):
        await legislation_queries.index_pending(session, doc_ids=created + updated)
    if created or updated or versioned:
        await bump_generation(session)
    return Ingested(created, updated, unchanged, versioned)


# ---------------------------------------------------------------------------------------------- reads


def citation_of(doc: LegislationDoc, section_id: str | None = None) -> str:
    if doc.type == "standard" and doc.designation:
        base = doc.designation
    else:
        base = f"{doc.title} ({jurisdictions.abbreviation(doc.jurisdiction)})"
    return f"{base} {section_id}" if section_id else base


def in_force(doc: LegislationDoc) -> bool | None:
    if doc.status == "repealed" or doc.repealed_date is not None:
        return False
    if doc.in_force_date is not None:
        return True
    return None


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where an instrument's text came from."""

    source_register: str
    source: str | None
    version_date: date | None
    licence: str | None
    attribution: str | None

    @property
    def sample(self) -> bool:
        """Concord's seeded sample: titles and headings, no statutory text."""
        return self.source_register == Register.SAMPLE


@dataclass(frozen=True, slots=True)
class Section:
    section_id: str
    title: str
    content: str | None
    depth: int
    parent_id: str | None
    order: int
    status: str
    amended_by: str | None
    cross_references: list[str]
    notes: str | None

    @classmethod
    def of(cls, s: LegislationSection) -> Section:
        return cls(
            s.section_id,
            s.title,
            s.content,
            s.depth,
            s.parent_id,
            s.order,
            s.status,
            s.amended_by,
            s.cross_references or [],
            s.notes,
        )


@dataclass(frozen=True, slots=True)
class Amendment:
    title: str
    id: str | None
    commenced: date | None
    description: str | None
    sections: list[str]

    @classmethod
    def of(cls, a: LegislationAmendment) -> Amendment:
        return cls(a.amending_title, a.amending_id, a.commenced, a.description, a.sections or [])


@dataclass(frozen=True, slots=True)
class Instrument:
    """An instrument as a read answers it: its facts (the derived ones, citation, inForce and the
    jurisdiction's abbreviation, as they were worked out when it was read or its version kept) and the parts
    asked for. A part that is None was not asked for (and is left out of the answer, not sent empty)."""

    id: str
    jurisdiction: str
    jurisdiction_abbreviation: str
    type: str
    title: str
    designation: str | None
    short_title: str | None
    year: int | None
    number: str | None
    register_id: str | None
    status: str
    in_force: bool | None
    in_force_date: date | None
    last_amended_date: date | None
    repealed_date: date | None
    administered_by: str | None
    url: str | None
    citation: str
    section_count: int
    updated_at: datetime
    provenance: Provenance | None
    sections: list[Section] | None = None
    amendments: list[Amendment] | None = None
    versions: list[date] | None = None  # one instrument's read: the compilation dates stored

    @classmethod
    def of(
        cls,
        doc: LegislationDoc,
        *,
        section_count: int,
        sections: list[Section] | None = None,
        amendments: list[Amendment] | None = None,
    ) -> Instrument:
        provenance = None
        if doc.source_register is not None:
            provenance = Provenance(
                doc.source_register, doc.source, doc.version_date, doc.licence, doc.attribution
            )
        return cls(
            id=doc.id,
            jurisdiction=doc.jurisdiction,
            jurisdiction_abbreviation=jurisdictions.abbreviation(doc.jurisdiction),
            type=doc.type,
            title=doc.title,
            designation=doc.designation,
            short_title=doc.short_title,
            year=doc.year,
            number=doc.number,
            register_id=doc.register_id,
            status=doc.status,
            in_force=in_force(doc),
            in_force_date=doc.in_force_date,
            last_amended_date=doc.last_amended_date,
            repealed_date=doc.repealed_date,
            administered_by=doc.administered_by,
            url=doc.url,
            citation=citation_of(doc),
            section_count=section_count,
            updated_at=doc.updated_at,
            provenance=provenance,
            sections=sections,
            amendments=amendments,
        )


@dataclass(frozen=True)
class InstrumentPage:
    instruments: list[Instrument]
    total: int
    limit: int
    offset: int

    @property
    def has_more(self) -> bool:
        return self.offset + len(self.instruments) < self.total


# A kept version's snapshot (legislation_versions.snapshot) is a stored format: its keys and values stay
# byte for byte as they were written, so what an earlier citation was verified against reads back the same.


def _day(value: date | None) -> str | None:
    return value.isoformat() if value else None


def _on_day(value: Any) -> date | None:
    return date.fromisoformat(value) if value else None


def _stored(inst: Instrument) -> dict[str, Any]:
    """An instrument, whole (facts, provenance, sections, amendments), as a kept version stores it."""
    p = inst.provenance
    return {
        "id": inst.id,
        "jurisdiction": inst.jurisdiction,
        "jurisdictionAbbreviation": inst.jurisdiction_abbreviation,
        "type": inst.type,
        "title": inst.title,
        "designation": inst.designation,
        "shortTitle": inst.short_title,
        "year": inst.year,
        "number": inst.number,
        "registerId": inst.register_id,
        "status": inst.status,
        "inForce": inst.in_force,
        "inForceDate": _day(inst.in_force_date),
        "lastAmendedDate": _day(inst.last_amended_date),
        "repealedDate": _day(inst.repealed_date),
        "administeredBy": inst.administered_by,
        "url": inst.url,
        "citation": inst.citation,
        "sectionCount": inst.section_count,
        "updatedAt": inst.updated_at.isoformat(),
        "provenance": None
        if p is None
        else {
            "sourceRegister": p.source_register,
            "source": p.source,
            "versionDate": _day(p.version_date),
            "licence": p.licence,
            "attribution": p.attribution,
            "sample": p.sample,
        },
        "sections": [
            {
                "sectionId": s.section_id,
                "title": s.title,
                "content": s.content,
                "depth": s.depth,
                "parentId": s.parent_id,
                "order": s.order,
                "status": s.status,
                "amendedBy": s.amended_by,
                "crossReferences": s.cross_references,
                "notes": s.notes,
            }
            for s in inst.sections or []
        ],
        "amendments": [
            {
                "title": a.title,
                "id": a.id,
                "commenced": _day(a.commenced),
                "description": a.description,
                "sections": a.sections,
            }
            for a in inst.amendments or []
        ],
    }


def _from_stored(snap: dict[str, Any]) -> Instrument:
    """A kept version read back from its snapshot (as `_stored` wrote it)."""
    p = snap.get("provenance")
    return Instrument(
        id=snap["id"],
        jurisdiction=snap["jurisdiction"],
        jurisdiction_abbreviation=snap["jurisdictionAbbreviation"],
        type=snap["type"],
        title=snap["title"],
        designation=snap["designation"],
        short_title=snap["shortTitle"],
        year=snap["year"],
        number=snap["number"],
        register_id=snap["registerId"],
        status=snap["status"],
        in_force=snap["inForce"],
        in_force_date=_on_day(snap["inForceDate"]),
        last_amended_date=_on_day(snap["lastAmendedDate"]),
        repealed_date=_on_day(snap["repealedDate"]),
        administered_by=snap["administeredBy"],
        url=snap["url"],
        citation=snap["citation"],
        section_count=snap["sectionCount"],
        updated_at=datetime.fromisoformat(snap["updatedAt"]),
        provenance=None
        if p is None
        else Provenance(
            p["sourceRegister"], p["source"], _on_day(p["versionDate"]), p["licence"], p["attribution"]
        ),
        sections=[
            Section(
                s["sectionId"],
                s["title"],
                s["content"],
                s["depth"],
                s["parentId"],
                s["order"],
                s["status"],
                s["amendedBy"],
                s["crossReferences"],
                s["notes"],
            )
            for s in snap.get("sections", [])
        ],
        amendments=[
            Amendment(a["title"], a["id"], _on_day(a["commenced"]), a["description"], a["sections"])
            for a in snap.get("amendments", [])
        ],
    )


def parse_include(raw: str | None) -> set[str]:
    """The parts to include, named exactly and separated by commas (sections,amendments)."""
    if raw is None:
        return set()
    names = set(raw.split(","))
    unknown = names - set(INCLUDES)
    if unknown:
        raise BadRequest(
            f"include accepts {', '.join(INCLUDES)}; unknown: {', '.join(sorted(unknown))}",
            code="invalid_field",
            field="include",
        )
    return names


async def _attach(session: AsyncSession, docs: list[LegislationDoc], include: set[str]) -> list[Instrument]:
    ids = [d.id for d in docs]
    counts = (
        dict(
            (
                await session.execute(
                    select(LegislationSection.doc_id, func.count())
                    .where(LegislationSection.doc_id.in_(ids))
                    .group_by(LegislationSection.doc_id)
                )
            ).all()
        )
        if ids
        else {}
    )
    sections: dict[str, list[Section]] | None = None
    amendments: dict[str, list[Amendment]] | None = None
    if "sections" in include and ids:
        sections = {d: [] for d in ids}
        rows = await session.scalars(
            select(LegislationSection)
            .where(LegislationSection.doc_id.in_(ids))
            .order_by(LegislationSection.doc_id, LegislationSection.order, LegislationSection.id)
        )
        for s in rows:
            sections[s.doc_id].append(Section.of(s))
    if "amendments" in include and ids:
        amendments = {d: [] for d in ids}
        rows_a = await session.scalars(
            select(LegislationAmendment)
            .where(LegislationAmendment.doc_id.in_(ids))
            .order_by(LegislationAmendment.doc_id, LegislationAmendment.commenced, LegislationAmendment.id)
        )
        for a in rows_a:
            amendments[a.doc_id].append(Amendment.of(a))
    return [
        Instrument.of(
            d,
            section_count=counts.get(d.id, 0),
            sections=sections[d.id] if sections is not None else None,
            amendments=amendments[d.id] if amendments is not None else None,
        )
        for d in docs
    ]


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


async def list_docs(
    session: AsyncSession,
    *,
    jurisdiction: str | None,
    type_: str | None,
    q: str | None,
    limit: int,
    offset: int,
    include: set[str],
) -> InstrumentPage:
    stmt = select(LegislationDoc)
    if jurisdiction:
        stmt = stmt.where(LegislationDoc.jurisdiction.startswith(jurisdiction, autoescape=True))
    if type_:
        stmt = stmt.where(LegislationDoc.type == type_)
    if q and q.strip():
        for word in q.split():
            pattern = _like(word.casefold())
            stmt = stmt.where(
                or_(
                    func.lower(LegislationDoc.title).like(pattern, escape="\\"),
                    func.lower(func.coalesce(LegislationDoc.designation, "")).like(pattern, escape="\\"),
                    func.lower(func.coalesce(LegislationDoc.short_title, "")).like(pattern, escape="\\"),
                )
            )
    total = await session.scalar(select(func.count()).select_from(stmt.subquery())) or 0
    rows = list(
        (
            await session.scalars(
                stmt.order_by(LegislationDoc.title, LegislationDoc.jurisdiction, LegislationDoc.id)
                .limit(limit)
                .offset(offset)
            )
        ).all()
    )
    return InstrumentPage(await _attach(session, rows, include), total, limit, offset)


def _one_section(inst: Instrument, section: str) -> Instrument:
    """The instrument with only the section asked for and its subsections, cited to that section."""
    sections = inst.sections or []
    wanted = normalise_section(section)
    ids = section_map([s.section_id for s in sections])  # `r 5` finds a stored `reg 5`
    sid = ids.get(wanted) if wanted is not None else None
    matched = [s for s in sections if s.section_id in (sid, section)]
    if not matched:
        raise NotFound(
            f"section {section!r} is not in {inst.title}",
            code="section_not_found",
            hint="GET the instrument without section to list its sections",
        )
    sid = matched[0].section_id
    return replace(
        inst,
        sections=[s for s in sections if s.section_id == sid or s.parent_id == sid],
        citation=f"{inst.citation} {sid}",
    )


async def get_doc(
    session: AsyncSession,
    doc_id: str,
    *,
    section: str | None,
    include: set[str],
    as_at: date | None = None,
) -> Instrument:
    """One instrument with its sections and the compilation dates stored (`versions`); with as_at, the
    compilation in force at that date: the current one when its version date is on or before it (or
    unknown), else the latest kept version on or before it."""
    doc = await session.get(LegislationDoc, doc_id) if DOC_ID.match(doc_id) else None
    if doc is None:
        raise NotFound(
            f"legislation {doc_id!r} not found",
            code="legislation_not_found",
            hint="list ids with GET /api/axiom/legislation?q=<words>",
        )
    versions = [
        d
        for d in await session.scalars(
            select(LegislationVersion.version_date)
            .where(LegislationVersion.doc_id == doc_id, LegislationVersion.version_date.is_not(None))
            .order_by(LegislationVersion.version_date)
        )
        if d is not None
    ]
    if as_at is not None and doc.version_date is not None and doc.version_date > as_at:
        snap = await session.scalar(
            select(LegislationVersion.snapshot)
            .where(LegislationVersion.doc_id == doc_id, LegislationVersion.version_date <= as_at)
            .order_by(LegislationVersion.version_date.desc(), LegislationVersion.id.desc())
            .limit(1)
        )
        if snap is None:
            raise NotFound(
                f"no compilation of {doc.title} as at {as_at.isoformat()} is stored",
                code="version_not_found",
                hint="versions lists the compilation dates stored",
                versions=[d.isoformat() for d in versions],
            )
        inst = _from_stored(snap)
        if "amendments" not in include:
            inst = replace(inst, amendments=None)
    else:
        inst = (await _attach(session, [doc], include | {"sections"}))[0]
    inst = replace(inst, versions=sorted({*versions, *([doc.version_date] if doc.version_date else [])}))
    return _one_section(inst, section) if section is not None else inst


def to_markdown(docs: list[Instrument]) -> str:
    parts = []
    for d in docs:
        lines = [f"# {d.citation if d.type != 'standard' else f'{d.designation} {d.title}'}", ""]
        facts: list[tuple[str, object]] = [
            ("Id", d.id),
            ("Type", d.type),
            ("Jurisdiction", f"{d.jurisdiction} ({d.jurisdiction_abbreviation})"),
            ("Year", d.year),
            ("Number", d.number),
            ("Register id", d.register_id),
            ("Status", d.status),
            ("In force from", _day(d.in_force_date)),
            ("Last amended", _day(d.last_amended_date)),
            ("Repealed", _day(d.repealed_date)),
            ("Source", d.url),
        ]
        prov = d.provenance
        if prov:
            facts += [
                (
                    "Provenance",
                    "Concord's sample: titles and headings only, no statutory text"
                    if prov.sample
                    else prov.source_register,
                ),
                ("Read from", prov.source),
                ("Version (compilation) date", _day(prov.version_date)),
                ("Licence", prov.licence),
                ("Attribution", prov.attribution),
            ]
        lines += [f"- {k}: {v}" for k, v in facts if v not in (None, "")]
        for s in d.sections or []:
            if s.section_id.endswith(")") and s.parent_id:
                continue  # a subsection: its text is in its provision's
            lines += ["", f"{'#' * min(6, 1 + s.depth)} {s.section_id} {s.title}"]
            if s.status != "in_force":
                lines += ["", f"*{s.status.replace('_', ' ')}*"]
            if s.content:
                lines += ["", s.content.strip()]
            if s.notes:
                lines += ["", "> " + s.notes.strip().replace("\n", "\n> ")]
            if s.amended_by:
                lines += ["", f"*amended: {s.amended_by}*"]
        if d.amendments:
            lines += ["", "## Amendments", ""]
            lines += [
                f"- {a.title}" + (f" (commenced {_day(a.commenced)})" if a.commenced else "")
                for a in d.amendments
            ]
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


# ------------------------------------------------------------------------------------------- search

_WORD = re.compile(r"[A-Za-z0-9]+")


def keywords(q: str) -> list[str]:
    return list(dict.fromkeys(w.casefold() for w in _WORD.findall(q) if len(w) >= 3))


def keywords_or_400(q: str) -> list[str]:
    words = keywords(q)
    if not words:
        raise BadRequest(
            "q needs at least one keyword of 3 or more letters or digits", code="invalid_field", field="q"
        )
    return words


@dataclass(frozen=True)
class Hit:
    """A section a search found, with its instrument, its relevance score and an excerpt of its text."""

    score: float
    section: LegislationSection
    doc: LegislationDoc
    excerpt: str | None  # around the keywords, which are in **bold**

    @property
    def citation(self) -> str:
        return citation_of(self.doc, self.section.section_id)


@dataclass(frozen=True)
class SearchResults:
    hits: list[Hit]
    query: str
    keywords: list[str]
    total: int
    limit: int
    offset: int

    @property
    def has_more(self) -> bool:
        return self.offset + len(self.hits) < self.total


def _highlight(text: str, words: list[str], width: int = 320) -> str:
    low = text.casefold()
    first = min((i for i in (low.find(w) for w in words) if i >= 0), default=0)
    start = max(0, first - width // 3)
    snippet = text[start : start + width]
    pattern = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)), re.I)
    snippet = pattern.sub(lambda m: f"**{m.group(0)}**", snippet)
    return ("…" if start else "") + snippet + ("…" if start + width < len(text) else "")


async def search(
    session: AsyncSession,
    *,
    q: str,
    jurisdiction: str | None,
    type_: str | None,
    status: str | None,
    limit: int,
    offset: int,
) -> SearchResults:
    """Keyword search over sections (heading and text) with a relevance score: 3 per keyword in the
    section heading, 3 per keyword in the section id, 2 per keyword in the instrument title, plus the
    full-text rank of the section's text (PostgreSQL ts_rank normalised by length × 10, SQLite FTS5
    bm25; stemmed); every keyword (3+ characters) must appear somewhere (in the text as a full-text match)."""
    words = keywords(q)
    if not words:
        raise BadRequest(
            "q needs at least one keyword of 3 or more letters or digits", code="invalid_field", field="q"
        )
    stmt: Any = select(LegislationSection, LegislationDoc).join(
        LegislationDoc, LegislationDoc.id == LegislationSection.doc_id
    )
    for i, w in enumerate(words):
        pattern = _like(w)
        text_match = legislation_queries.section_matches(session, [w], any_word=False, tag=f"fts_word_{i}")
        stmt = stmt.where(
            or_(
                func.lower(LegislationSection.title).like(pattern, escape="\\"),
                func.lower(LegislationSection.section_id).like(pattern, escape="\\"),
                LegislationSection.id.in_(select(text_match.subquery().c.section_pk)),
                func.lower(LegislationDoc.title).like(pattern, escape="\\"),
                func.lower(func.coalesce(LegislationDoc.designation, "")).like(pattern, escape="\\"),
            )
        )
    ranked = legislation_queries.section_matches(session, words, any_word=True, tag="fts_rank").subquery()
    stmt = stmt.add_columns(ranked.c.relevance).outerjoin(
        ranked, ranked.c.section_pk == LegislationSection.id
    )
    if jurisdiction:
        stmt = stmt.where(LegislationDoc.jurisdiction.startswith(jurisdiction, autoescape=True))
    if type_:
        stmt = stmt.where(LegislationDoc.type == type_)
    if status:
        stmt = stmt.where(LegislationSection.status == status)
    rows = (await session.execute(stmt.limit(MAX_SEARCH_CANDIDATES))).all()
    scored = []
    for sec, doc, text_rank in rows:
        title, sid = sec.title.casefold(), sec.section_id.casefold()
        doc_title = f"{doc.designation or ''} {doc.title}".casefold()
        score = sum(3 * (w in title) + 3 * (w in sid) + 2 * (w in doc_title) for w in words)
        scored.append((round(score + max(0.0, float(text_rank or 0.0)), 4), sec, doc))
    scored.sort(key=lambda t: (-t[0], t[2].title, t[2].jurisdiction, t[1].order))
    page = scored[offset : offset + limit]
    return SearchResults(
        [
            Hit(score, sec, doc, _highlight(sec.content, words) if sec.content else None)
            for score, sec, doc in page
        ],
        q,
        words,
        len(scored),
        limit,
        offset,
    )
