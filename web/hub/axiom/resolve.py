"""Citation resolution: free and keyless (spec rules 1-8 in domain/citations.py)."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from domain.axiom import citations
from web.hub.axiom.keys import citation_index
from web.hub.axiom.schemas import Resolution
from web.kernel.replies import Answer, Reply
from web.kernel.request import runtime
from web.kernel.routing import Routes
from web.kernel.wire import HAS_TEXT, Rule

# A citation holds something besides white space; its absence and a blank one are both citation_required.
CITATION = Rule(HAS_TEXT.pattern, "a citation is required", code="citation_required")

routes = Routes()


class ResolveQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")
    citation: Annotated[str, CITATION] | None = Field(
        default=None,
        max_length=citations.MAX_CITATION,
        description="Legal citation (Title Year (Jurisdiction) s 19(2)(a)) or standards designation "
        "(AS/NZS 3000:2018, AS 1170.4-2007, AS ISO 31000:2018)",
        json_schema_extra={"x-required": True},
    )
    asAt: date | None = Field(
        default=None,
        description="YYYY-MM-DD: verify the pinpoint against the compilation in force at that date (a kept "
        "version when a later one was imported since); 404 version_not_found when none is stored that early",
    )


@routes.route(
    "GET",
    "/api/axiom/resolve",
    summary="Resolve a legal citation or standards designation to a verified document id (free)",
    tags=["Axiom Legislation"],
    query=ResolveQuery,
    response=Resolution,
    errors={
        400: "citation missing, or asAt not a date",
        404: "citation_not_resolved, citation_ambiguous with candidates, or version_not_found (asAt)",
    },
)
async def resolve(request: web.Request, query: ResolveQuery) -> Answer:
    async with runtime(request).db.read() as session:
        found = await citations.resolve(session, citation_index(request), query.citation, as_at=query.asAt)
    return Reply(Resolution.of(found), headers={"Access-Control-Allow-Origin": "*"})
