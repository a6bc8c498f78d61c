"""The legislation store: ingest (upsert) of instruments, listing, reading, Markdown and keyword search."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass
from datetime import date
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
    """An instrument as it stands, whole (facts, provenance, sections, amendments): a kept version."""
    data = doc_dict(doc, section_count=len(sections))
    data["sections"] = [section_dict(s) for s in sorted(sections, key=lambda s: s.order)]
    data["amendments"] = [amendment_dict(a) for a in amendments]
    return data


async def _keep_version(
    session: AsyncSession, doc_id: str, version_date: date | None, snap: dict[str, Any]
) -> None:
    session.add(
        LegislationVersion(doc_id=doc_id, version_date=version_date, snapshot=snap, created_at=utcnow())
    )


async def ingest(
    session: AsyncSession, ctx: Context, docs: list[InstrumentIn], *, bulk: bool = False
) -> dict[str, Any]:
    """Upsert instruments (their sections and amendments are replaced). The doc row is read FOR UPDATE and
    then written with INSERT … ON CONFLICT DO UPDATE, so concurrent ingests of one id serialise.

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
    section_rows: list[dict[str, Any]] = []  # inserted together (executemany), after their documents

    async def write_sections() -> None:
        if section_rows:
            await session.execute(insert(table_of(LegislationSection)), section_rows)
            section_rows.clear()

    for doc, doc_id in zip(docs, ids, strict=True):
        fingerprint = hashlib.sha256(doc.model_dump_json(exclude={"id"}).encode()).hexdigest()
        if doc_id in seen:
            await write_sections()
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
        stmt = sqlutil.insert(session, LegislationDoc).values(
            id=doc_id, created_at=now, updated_at=now, **values
        )
        values["updated_at"] = now
        await session.execute(stmt.on_conflict_do_update(index_elements=["id"], set_=values))
        # Even for an instrument read as new: a concurrent ingest may have created it since (the upsert
        # above then waited for it and updated), and its sections are replaced.
        await session.execute(delete(LegislationSection).where(LegislationSection.doc_id == doc_id))
        await session.execute(delete(LegislationAmendment).where(LegislationAmendment.doc_id == doc_id))
        # Core executemany inserts, the batch's sections together: a long instrument has thousands.
        section_rows.extend(new_sections)
        amendments = _amendments(doc_id, doc)
        if amendments:
            await session.execute(
                insert(LegislationAmendment), [_row(a, LegislationAmendment) for a in amendments]
            )
        audit.record(
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
    await write_sections()
    await session.flush()
    if not bulk and (created or updated):
        await legislation_queries.index_pending(session, doc_ids=created + updated)
    if created or updated or versioned:
        await bump_generation(session)
    return {
        "created": created,
        "updated": updated,
        "unchanged": unchanged,
        "versioned": versioned,
        "count": len(created) + len(updated),
    }


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


def _d(value: date | None) -> str | None:
    return value.isoformat() if value else None


def section_dict(s: LegislationSection) -> dict[str, Any]:
    return {
        "sectionId": s.section_id,
        "title": s.title,
        "content": s.content,
        "depth": s.depth,
        "parentId": s.parent_id,
        "order": s.order,
        "status": s.status,
        "amendedBy": s.amended_by,
        "crossReferences": s.cross_references or [],
        "notes": s.notes,
    }


def amendment_dict(a: LegislationAmendment) -> dict[str, Any]:
    return {
        "title": a.amending_title,
        "id": a.amending_id,
        "commenced": _d(a.commenced),
        "description": a.description,
        "sections": a.sections or [],
    }


def provenance_dict(doc: LegislationDoc) -> dict[str, Any] | None:
    if doc.source_register is None:
        return None
    return {
        "sourceRegister": doc.source_register,
        "source": doc.source,
        "versionDate": _d(doc.version_date),
        "licence": doc.licence,
        "attribution": doc.attribution,
        "sample": doc.source_register == Register.SAMPLE,
    }


def doc_dict(doc: LegislationDoc, *, section_count: int) -> dict[str, Any]:
    return {
        "id": doc.id,
        "jurisdiction": doc.jurisdiction,
        "jurisdictionAbbreviation": jurisdictions.abbreviation(doc.jurisdiction),
        "type": doc.type,
        "title": doc.title,
        "designation": doc.designation,
        "shortTitle": doc.short_title,
        "year": doc.year,
        "number": doc.number,
        "registerId": doc.register_id,
        "status": doc.status,
        "inForce": in_force(doc),
        "inForceDate": _d(doc.in_force_date),
        "lastAmendedDate": _d(doc.last_amended_date),
        "repealedDate": _d(doc.repealed_date),
        "administeredBy": doc.administered_by,
        "url": doc.url,
        "citation": citation_of(doc),
        "sectionCount": section_count,
        "updatedAt": doc.updated_at.isoformat(),
        "provenance": provenance_dict(doc),
    }


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


async def _attach(
    session: AsyncSession, docs: list[LegislationDoc], include: set[str]
) -> list[dict[str, Any]]:
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
    out = {d.id: doc_dict(d, section_count=counts.get(d.id, 0)) for d in docs}
    if "sections" in include and ids:
        for d in ids:
            out[d]["sections"] = []
        rows = await session.scalars(
            select(LegislationSection)
            .where(LegislationSection.doc_id.in_(ids))
            .order_by(LegislationSection.doc_id, LegislationSection.order, LegislationSection.id)
        )
        for s in rows:
            out[s.doc_id]["sections"].append(section_dict(s) | {"provenance": out[s.doc_id]["provenance"]})
    if "amendments" in include and ids:
        for d in ids:
            out[d]["amendments"] = []
        rows_a = await session.scalars(
            select(LegislationAmendment)
            .where(LegislationAmendment.doc_id.in_(ids))
            .order_by(LegislationAmendment.doc_id, LegislationAmendment.commenced, LegislationAmendment.id)
        )
        for a in rows_a:
            out[a.doc_id]["amendments"].append(amendment_dict(a))
    return [out[d] for d in ids]


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
) -> dict[str, Any]:
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
    return {
        "legislation": await _attach(session, rows, include),
        "total": total,
        "limit": limit,
        "offset": offset,
        "hasMore": offset + len(rows) < total,
    }


def _one_section(data: dict[str, Any], section: str, title: str) -> None:
    wanted = normalise_section(section)
    ids = section_map([s["sectionId"] for s in data["sections"]])  # `r 5` finds a stored `reg 5`
    sid = ids.get(wanted) if wanted is not None else None
    matched = [s for s in data["sections"] if s["sectionId"] in (sid, section)]
    if not matched:
        raise NotFound(
            f"section {section!r} is not in {title}",
            code="section_not_found",
            hint="GET the instrument without section to list its sections",
        )
    sid = matched[0]["sectionId"]
    data["sections"] = [s for s in data["sections"] if s["sectionId"] == sid or s["parentId"] == sid]
    data["citation"] = f"{data['citation']} {sid}"


async def get_doc(
    session: AsyncSession,
    doc_id: str,
    *,
    section: str | None,
    include: set[str],
    as_at: date | None = None,
) -> dict[str, Any]:
    """One instrument with its sections; with as_at, the compilation in force at that date: the current one
    when its version date is on or before it (or unknown), else the latest kept version on or before it."""
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
        data: dict[str, Any] = dict(snap)
        for s in data["sections"]:
            s["provenance"] = data.get("provenance")
        if "amendments" not in include:
            data.pop("amendments", None)
    else:
        data = (await _attach(session, [doc], include | {"sections"}))[0]
    data["versions"] = sorted(
        {*(d.isoformat() for d in versions), *([doc.version_date.isoformat()] if doc.version_date else [])}
    )
    if section is not None:
        _one_section(data, section, doc.title)
    return {"legislation": data, "sectionCount": data["sectionCount"]}


def to_markdown(docs: list[dict[str, Any]]) -> str:
    parts = []
    for d in docs:
        lines = [f"# {d['citation'] if d['type'] != 'standard' else d['designation'] + ' ' + d['title']}", ""]
        facts = [
            ("Id", d["id"]),
            ("Type", d["type"]),
            ("Jurisdiction", f"{d['jurisdiction']} ({d['jurisdictionAbbreviation']})"),
            ("Year", d["year"]),
            ("Number", d["number"]),
            ("Register id", d["registerId"]),
            ("Status", d["status"]),
            ("In force from", d["inForceDate"]),
            ("Last amended", d["lastAmendedDate"]),
            ("Repealed", d["repealedDate"]),
            ("Source", d["url"]),
        ]
        prov = d.get("provenance")
        if prov:
            facts += [
                (
                    "Provenance",
                    "Concord's sample: titles and headings only, no statutory text"
                    if prov["sample"]
                    else prov["sourceRegister"],
                ),
                ("Read from", prov["source"]),
                ("Version (compilation) date", prov["versionDate"]),
                ("Licence", prov["licence"]),
                ("Attribution", prov["attribution"]),
            ]
        lines += [f"- {k}: {v}" for k, v in facts if v not in (None, "")]
        for s in d.get("sections") or []:
            if s["sectionId"].endswith(")") and s["parentId"]:
                continue  # a subsection: its text is in its provision's
            lines += ["", f"{'#' * min(6, 1 + s['depth'])} {s['sectionId']} {s['title']}"]
            if s["status"] != "in_force":
                lines += ["", f"*{s['status'].replace('_', ' ')}*"]
            if s["content"]:
                lines += ["", s["content"].strip()]
            if s.get("notes"):
                lines += ["", "> " + s["notes"].strip().replace("\n", "\n> ")]
            if s.get("amendedBy"):
                lines += ["", f"*amended: {s['amendedBy']}*"]
        if d.get("amendments"):
            lines += ["", "## Amendments", ""]
            lines += [
                f"- {a['title']}" + (f" (commenced {a['commenced']})" if a["commenced"] else "")
                for a in d["amendments"]
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
