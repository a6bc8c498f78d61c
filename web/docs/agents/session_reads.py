"""Reads of a document's PACT session as the PACT CLI makes them: the agents as a bare array on the PACT path
(`pact agents`), and the transcript (`pact transcript`, PACT v2.0.3 §4.4) on both path families."""

from __future__ import annotations

from aiohttp import web

from domain.documents import agents as tap
from web.docs.agents.paths import AUTH, NOT_FOUND, TAGS, doc_id, document_route
from web.docs.auth import caller
from web.docs.schemas import DocumentAgentList
from web.kernel.access import Service
from web.kernel.events import Transcript, TranscriptQuery
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()
route = document_route(routes)


@routes.route(
    "GET",
    "/api/pact/{docId}/agents",
    summary="Active agents on the document, as a bare array (what the PACT CLI reads)",
    tags=TAGS,
    response=DocumentAgentList,
    access=Service("tap:read"),
    errors={**AUTH, **NOT_FOUND},
)
async def agent_list(request: web.Request) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await tap.agents(session, who, doc_id(request))
    return DocumentAgentList.of(found)


@route(
    "GET",
    "/transcript",
    summary="The event log since a cursor, each event with a one-line summary: {events, latestEventId}",
    query=TranscriptQuery,
    response=Transcript,
    access=Service("tap:read"),
)
async def transcript(request: web.Request, query: TranscriptQuery) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await tap.transcript(session, who, doc_id(request), since=query.since, limit=query.limit)
    return Transcript.of(found)
