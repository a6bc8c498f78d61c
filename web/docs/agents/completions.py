"""Done signals on a document (PACT v2.0.3 §7.1): `POST …/done` by a joined agent, `GET …/completions`."""

from __future__ import annotations

from aiohttp import web

from domain.documents import completions
from web.docs.agents.paths import doc_id, document_route
from web.docs.auth import caller
from web.docs.schemas import DocumentDone, DoneBody
from web.kernel.access import Service
from web.kernel.completions import CompletionList
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()
route = document_route(routes)


@route(
    "POST",
    "/done",
    summary="Signal completion: aligned, dissenting, partial or abstained (replaces the agent's last signal)",
    body=DoneBody,
    response=DocumentDone,
    access=Service("tap:write"),
)
async def done(request: web.Request, body: DoneBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        signal = await completions.done(
            session, who, doc_id(request), status=body.status, summary=body.summary
        )
    return DocumentDone.of(signal)


@route(
    "GET",
    "/completions",
    summary="The agents' done signals, one per agent, oldest first",
    response=CompletionList,
    access=Service("tap:read"),
)
async def list_completions(request: web.Request) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await completions.completions_of(session, who, doc_id(request))
    return CompletionList.of(found)
