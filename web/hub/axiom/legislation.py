"""Axiom legislation: listing, keyword search, one instrument, and staff ingest."""

from __future__ import annotations

import tempfile
from datetime import date
from pathlib import Path
from typing import Annotated, Literal, cast

from aiohttp import BodyPartReader, web
from aiohttp.http_exceptions import HttpProcessingError
from pydantic import BaseModel, ConfigDict, Field

from domain.axiom import import_run, importers, legislation
from domain.axiom.legislation import InstrumentTypeField, SectionStatusField
from domain.axiom.provenance import Register
from domain.documents.blobs import PayloadTooLarge, UnsupportedMediaType
from domain.kernel import jurisdictions
from domain.kernel.errors import BadRequest
from web.hub.auth import spend_credit, staff_context
from web.hub.axiom.keys import METERED, citation_index, page_links
from web.hub.axiom.schemas import (
    ImportForm,
    ImportResult,
    IngestDoc,
    IngestResult,
    LegislationDetail,
    LegislationPage,
    LegislationSearch,
)
from web.kernel.access import Commercial, Staff
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes, parse_model, read_json
from web.kernel.wire import JURISDICTION_PREFIX, MAX_INT, Rule, comma_list

INCLUDE = comma_list(legislation.INCLUDES)
# A keyword is 3 or more ASCII letters or digits (domain/axiom/legislation.py keywords).
KEYWORDS = Rule(r"[A-Za-z0-9]{3}", "needs at least one keyword of 3 or more letters or digits")

routes = Routes()

TAG = "Axiom Legislation"


class LegislationQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")
    jurisdiction: Annotated[str, JURISDICTION_PREFIX] | None = Field(
        default=None, description="Prefix: AU (all), AU-NSW …; AGLC abbreviations accepted (as written)"
    )
    type: InstrumentTypeField | None = None
    q: str | None = Field(default=None, max_length=300, description="Words in the title or designation")
    limit: int = Field(default=20, ge=1, le=100)
    offset: int = Field(default=0, ge=0, le=MAX_INT)
    format: Literal["json", "markdown"] = "json"
    include: Annotated[str, INCLUDE] | None = Field(
        default=None, description="Comma-separated, no spaces: sections, amendments"
    )


class SearchQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")
    q: Annotated[str, KEYWORDS] = Field(
        min_length=1, max_length=300, description="Keywords (3+ letters or digits each; all must match)"
    )
    jurisdiction: Annotated[str, JURISDICTION_PREFIX] | None = Field(
        default=None, description="Jurisdiction prefix (as for the listing)"
    )
    type: InstrumentTypeField | None = None
    status: SectionStatusField | None = Field(default=None, description="Section status")
    limit: int = Field(default=20, ge=1, le=100)
    offset: int = Field(default=0, ge=0, le=MAX_INT)


class DocQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")
    section: str | None = Field(default=None, max_length=60, description="Pinpoint such as 's 19'")
    format: Literal["json", "markdown"] = "json"
    include: Annotated[str, INCLUDE] | None = Field(
        default=None, description="amendments (sections are always included)"
    )
    asAt: date | None = Field(
        default=None, description="YYYY-MM-DD: the compilation in force at that date (a kept version)"
    )


def _markdown(text: str, credits: int) -> web.Response:
    return web.Response(
        text=text,
        content_type="text/markdown",
        charset="utf-8",
        headers={"X-Credits-Remaining": str(credits)},
    )


@routes.route(
    "GET",
    "/api/axiom/legislation",
    summary="Legislation and standards, paginated, as JSON or Markdown (1 credit)",
    tags=[TAG],
    query=LegislationQuery,
    response=LegislationPage,
    access=Commercial(metered=True),
    errors=METERED,
    alternatives=["text/markdown"],
)
async def list_legislation(request: web.Request, query: LegislationQuery) -> Answer:
    include = legislation.parse_include(query.include)
    jurisdiction = jurisdictions.prefix_filter(query.jurisdiction)
    credits = await spend_credit(request)
    async with runtime(request).db.read() as session:
        page = await legislation.list_docs(
            session,
            jurisdiction=jurisdiction,
            type_=query.type,
            q=query.q,
            limit=query.limit,
            offset=query.offset,
            include=include,
        )
    if query.format == "markdown":
        return _markdown(legislation.to_markdown(page.instruments), credits)
    links = page_links(request, offset=query.offset, limit=query.limit, has_more=page.has_more)
    return LegislationPage.answer(page, credits, links)


@routes.route(
    "GET",
    "/api/axiom/legislation/search",
    summary="Keyword search over section headings and text, by relevance (1 credit)",
    tags=[TAG],
    query=SearchQuery,
    response=LegislationSearch,
    access=Commercial(metered=True),
    errors=METERED,
)
async def search_legislation(request: web.Request, query: SearchQuery) -> Answer:
    jurisdiction = jurisdictions.prefix_filter(query.jurisdiction)
    legislation.keywords_or_400(query.q)  # a bad query costs no credit
    credits = await spend_credit(request)
    async with runtime(request).db.read() as session:
        found = await legislation.search(
            session,
            q=query.q,
            jurisdiction=jurisdiction,
            type_=query.type,
            status=query.status,
            limit=query.limit,
            offset=query.offset,
        )
    links = page_links(request, offset=query.offset, limit=query.limit, has_more=found.has_more)
    return LegislationSearch.of(found, credits, links)


@routes.route(
    "POST",
    "/api/axiom/legislation/ingest",
    summary="Staff: ingest instruments as JSON ({documents: [...]}); upsert by id",
    tags=[TAG],
    response=IngestResult,
    status=200,
    access=Staff(role=None),
    # The handler parses the body itself (domain rules beyond the model): the model documents it.
    documented_body=IngestDoc,
    errors={
        401: "Missing or invalid staff key",
        413: "The body is larger than the hub accepts (CONCORD_MAX_BODY_BYTES): send fewer instruments",
    },
)
async def ingest(request: web.Request) -> Answer:
    docs = legislation.parse_documents(await read_json(request))
    async with runtime(request).db.transaction() as session:
        result = await legislation.ingest(session, staff_context(request), docs)
    citation_index(request).mark_stale()
    return IngestResult.of(result)


MAX_FIELD = 4096


async def _field(part: BodyPartReader) -> str:
    data = bytearray()
    while chunk := await part.read_chunk(1024):
        data += chunk
        if len(data) > MAX_FIELD:
            raise BadRequest(f"form field {part.name} is longer than {MAX_FIELD} bytes", field=part.name)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest(f"form field {part.name} is not UTF-8 text", field=part.name) from None


def _facts(form: ImportForm, filename: str) -> importers.FileFacts:
    return importers.FileFacts(
        register=form.sourceRegister or Register.OTHER,
        jurisdiction=jurisdictions.normalise(form.jurisdiction) if form.jurisdiction else None,
        title=form.title,
        version_date=form.versionDate,
        source=form.source or filename,
        repealed=form.repealed,
    )


@routes.route(
    "POST",
    "/api/axiom/legislation/import",
    summary="Staff: import a register file (DOCX, EPUB, XHTML, PDF) or a corpus JSONL (multipart form: file, "
    "optional sourceRegister, jurisdiction, title, versionDate, source, repealed)",
    tags=[TAG],
    response=ImportResult,
    status=200,
    access=Staff(role=None),
    errors={
        400: "A form field is invalid",
        401: "Missing or invalid staff key",
        413: "The file is larger than the upload limit",
        415: "Not multipart, or not a DOCX, EPUB, XHTML, PDF or JSONL file",
        422: "The file cannot be read as its kind, or holds no instrument (no title, no jurisdiction)",
    },
)
async def import_legislation(request: web.Request) -> Answer:
    rt = runtime(request)
    if not request.content_type.startswith("multipart/form-data"):
        raise UnsupportedMediaType(
            "upload as multipart/form-data with the file in a field named 'file'", field="file"
        )
    limit = rt.settings.max_upload_bytes
    fields: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="concord-legislation-") as tmp:
        path = Path(tmp) / "upload"
        filename: str | None = None
        try:
            reader = await request.multipart()
            while (part := await reader.next()) is not None:
                if not isinstance(part, BodyPartReader):
                    continue
                if part.name == "file":
                    if filename is not None:
                        raise BadRequest("send exactly one file", field="file")
                    filename = part.filename or "upload"
                    size = 0
                    with path.open("wb") as out:  # noqa: ASYNC230 - a local temporary file, written in chunks
                        while chunk := await part.read_chunk(65536):
                            size += len(chunk)
                            if size > limit:
                                raise PayloadTooLarge(f"the file is larger than {limit} bytes", field="file")
                            out.write(chunk)
                elif part.name in ImportForm.model_fields:
                    fields[part.name] = await _field(part)
                else:
                    raise BadRequest(f"unknown form field {part.name!r}", field=part.name)
        except (ValueError, AssertionError, HttpProcessingError) as exc:
            raise BadRequest(f"malformed multipart body: {exc}", field="file") from None
        if filename is None:
            raise BadRequest("the form has no 'file' field", field="file")
        form = cast(ImportForm, parse_model(ImportForm, fields, "form"))
        progress = await import_run.import_path(
            rt.db, staff_context(request), path, _facts(form, filename), name=filename
        )
    citation_index(request).mark_stale()
    return ImportResult.of(progress)


@routes.route(
    "GET",
    "/api/axiom/legislation/{docId}",
    summary="One instrument with its sections (optionally one section) (1 credit)",
    tags=[TAG],
    query=DocQuery,
    response=LegislationDetail,
    access=Commercial(metered=True),
    errors={**METERED, 404: "legislation_not_found, section_not_found or version_not_found"},
    alternatives=["text/markdown"],
)
async def get_legislation(request: web.Request, query: DocQuery) -> Answer:
    include = legislation.parse_include(query.include)
    credits = await spend_credit(request)
    async with runtime(request).db.read() as session:
        found = await legislation.get_doc(
            session, request.match_info["docId"], section=query.section, include=include, as_at=query.asAt
        )
    if query.format == "markdown":
        return _markdown(legislation.to_markdown([found]), credits)
    return LegislationDetail.answer(found, credits)
