"""Axiom legislation: listing, keyword search, one instrument, and staff ingest."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from domain.axiom import legislation
from domain.kernel import jurisdictions
from web.hub.auth import spend_credit, staff_context
from web.hub.axiom.keys import METERED, citation_index, page_links
from web.hub.axiom.schemas import (
    IngestDoc,
    IngestResult,
    LegislationDetail,
    LegislationPage,
    LegislationSearch,
)
from web.kernel.access import Commercial, Staff
from web.kernel.request import runtime
from web.kernel.routing import Routes, json_response, read_json
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
    type: Literal["act", "regulation", "standard", "guidance"] | None = None
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
    type: Literal["act", "regulation", "standard", "guidance"] | None = None
    status: Literal["in_force", "repealed", "not_yet_commenced"] | None = Field(
        default=None, description="Section status"
    )
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
async def list_legislation(request: web.Request, query: LegislationQuery) -> web.Response:
    include = legislation.parse_include(query.include)
    jurisdiction = jurisdictions.prefix_filter(query.jurisdiction)
    credits = await spend_credit(request)
    async with runtime(request).db.read() as session:
        result = await legislation.list_docs(
            session,
            jurisdiction=jurisdiction,
            type_=query.type,
            q=query.q,
            limit=query.limit,
            offset=query.offset,
            include=include,
        )
    if query.format == "markdown":
        return _markdown(legislation.to_markdown(result["legislation"]), credits)
    result["creditsRemaining"] = credits
    result["_links"] = page_links(request, offset=query.offset, limit=query.limit, has_more=result["hasMore"])
    return json_response(result)


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
async def search_legislation(request: web.Request, query: SearchQuery) -> web.Response:
    jurisdiction = jurisdictions.prefix_filter(query.jurisdiction)
    legislation.keywords_or_400(query.q)  # a bad query costs no credit
    credits = await spend_credit(request)
    async with runtime(request).db.read() as session:
        result = await legislation.search(
            session,
            q=query.q,
            jurisdiction=jurisdiction,
            type_=query.type,
            status=query.status,
            limit=query.limit,
            offset=query.offset,
        )
    result["creditsRemaining"] = credits
    more = query.offset + len(result["results"]) < result["total"]
    result["_links"] = page_links(request, offset=query.offset, limit=query.limit, has_more=more)
    return json_response(result)


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
    errors={401: "Missing or invalid staff key"},
)
async def ingest(request: web.Request) -> web.Response:
    docs = legislation.parse_documents(await read_json(request))
    async with runtime(request).db.transaction() as session:
        result = await legislation.ingest(session, staff_context(request), docs)
    citation_index(request).mark_stale()
    return json_response(result)


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
async def get_legislation(request: web.Request, query: DocQuery) -> web.Response:
    include = legislation.parse_include(query.include)
    credits = await spend_credit(request)
    async with runtime(request).db.read() as session:
        result = await legislation.get_doc(
            session, request.match_info["docId"], section=query.section, include=include, as_at=query.asAt
        )
    if query.format == "markdown":
        return _markdown(legislation.to_markdown([result["legislation"]]), credits)
    result["creditsRemaining"] = credits
    return json_response(result)
