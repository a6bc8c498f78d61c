"""Axiom commercial access: key discovery and creation, usage, and the helpers the other Axiom route
modules share (paging links, the app's citation index)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from domain.axiom import citations
from domain.axiom import keys as axiom_keys
from web.hub.auth import commercial_key
from web.hub.axiom.schemas import AxiomDiscovery, AxiomKeyCreated, AxiomUsage
from web.kernel.access import Commercial
from web.kernel.replies import Answer
from web.kernel.request import client_address, context, rate_limits, runtime
from web.kernel.routing import Routes
from web.kernel.wire import HAS_LETTER_OR_DIGIT

routes = Routes()

TAG = "Axiom Facts"
UNAUTHORIZED = {401: "Missing or invalid commercial key (agent keys are refused)"}
METERED = {**UNAUTHORIZED, 402: "No credits left in the current billing period"}
# The process's citation index (rebuilt lazily), attached to the hub app by web/app.py.
CITATION_INDEX = web.AppKey("citation_index", citations.IndexHolder)


class AxiomKeyBody(BaseModel):
    model_config = ConfigDict(extra="ignore")
    ownerName: Annotated[str, HAS_LETTER_OR_DIGIT] = Field(
        min_length=2, max_length=128, description="Who the key is for: 2 to 128 characters, a letter or digit"
    )


def page_links(request: web.Request, *, offset: int, limit: int, has_more: bool) -> dict[str, str | None]:
    """self and next links of an offset-paginated listing (same query, next offset)."""
    params = dict(request.query)
    self_link = f"{request.path}?{urlencode(params)}" if params else request.path
    params["offset"] = str(offset + limit)
    return {"self": self_link, "next": f"{request.path}?{urlencode(params)}" if has_more else None}


def citation_index(request: web.Request) -> citations.IndexHolder:
    return request.app[CITATION_INDEX]


@routes.route(
    "GET",
    "/api/axiom/keys",
    summary="Discovery: pricing tiers and capabilities",
    tags=[TAG],
    response=AxiomDiscovery,
)
async def discovery(request: web.Request) -> Answer:
    return AxiomDiscovery.current()


@routes.route(
    "POST",
    "/api/axiom/keys",
    summary="Create a commercial key (pact_ax_…); returned once, stored hashed",
    tags=[TAG],
    body=AxiomKeyBody,
    response=AxiomKeyCreated,
    status=201,
    errors={429: "Rate limit exceeded (settings.rate_limit_keys per minute per client)"},
)
async def create_key(request: web.Request, body: AxiomKeyBody) -> Answer:
    rt = runtime(request)
    await rate_limits(request).hit("axiom_keys", rt.settings.rate_limit_keys, client_address(request))
    async with rt.db.transaction() as session:
        made = await axiom_keys.create(session, context(request), owner_name=body.ownerName)
    return AxiomKeyCreated.of(made)


@routes.route(
    "GET",
    "/api/axiom/usage",
    summary="Usage of this key in the current billing period (free)",
    tags=[TAG],
    response=AxiomUsage,
    access=Commercial(metered=False),
    errors=UNAUTHORIZED,
)
async def usage(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        used = await axiom_keys.usage(session, commercial_key(request))
    return AxiomUsage.of(used)
