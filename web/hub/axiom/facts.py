"""Axiom verified facts: topics in consensus or stable, with provenance, citations and consensus."""

from __future__ import annotations

from typing import Annotated

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from domain.axiom import facts, fulltext
from domain.kernel import jurisdictions
from domain.topics.store import Tier
from web.hub.auth import spend_credit
from web.hub.axiom.keys import METERED, page_links
from web.hub.axiom.schemas import FactDetail, FactPage
from web.kernel.access import Commercial
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes
from web.kernel.wire import JURISDICTION_PREFIX, MAX_INT, WHITE_SPACE, Rule

# A query holds a word (domain/axiom/fulltext.py has_words: a letter, digit or underscore), or is blank for
# no filter.
FACTS_QUERY = Rule(
    rf"^[{WHITE_SPACE}]*$|[\p{{L}}\p{{N}}_]",
    "has no searchable words (letters or digits); leave it out for no filter",
    test=lambda q: not q.strip() or fulltext.has_words(q),
)

routes = Routes()

TAG = "Axiom Facts"


class FactsQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")
    tier: Tier | None = Field(default=None, description="empirical, institutional, derived or contested")
    jurisdiction: Annotated[str, JURISDICTION_PREFIX] | None = Field(
        default=None, description="Jurisdiction prefix: AU matches AU and every AU-…"
    )
    q: Annotated[str, FACTS_QUERY] | None = Field(
        default=None,
        max_length=500,
        description='Full-text query: words (all must match), "phrases", or, -excluded; empty: no filter',
    )
    limit: int = Field(default=20, ge=1, le=100)
    offset: int = Field(default=0, ge=0, le=MAX_INT)


@routes.route(
    "GET",
    "/api/axiom/facts",
    summary="Verified facts, paginated (1 credit)",
    tags=[TAG],
    query=FactsQuery,
    response=FactPage,
    access=Commercial(metered=True),
    errors=METERED,
)
async def list_facts(request: web.Request, query: FactsQuery) -> Answer:
    facts.check_filters(tier=query.tier, q=query.q)
    jurisdiction = jurisdictions.prefix_filter(query.jurisdiction)
    credits = await spend_credit(request)
    async with runtime(request).db.read() as session:
        page = await facts.list_facts(
            session,
            tier=query.tier,
            jurisdiction=jurisdiction,
            q=query.q,
            limit=query.limit,
            offset=query.offset,
        )
    links = page_links(request, offset=query.offset, limit=query.limit, has_more=page.has_more)
    return FactPage.of(page, credits, links)


@routes.route(
    "GET",
    "/api/axiom/facts/{factId}",
    summary="One fact with provenance, citations, sections and consensus metadata (1 credit)",
    tags=[TAG],
    response=FactDetail,
    access=Commercial(metered=True),
    errors={**METERED, 404: "No topic with this id has reached consensus"},
)
async def get_fact(request: web.Request) -> Answer:
    credits = await spend_credit(request)
    async with runtime(request).db.read() as session:
        detail = await facts.get_fact(session, request.match_info["factId"])
    return FactDetail.of(detail, credits)
