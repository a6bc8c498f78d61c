"""Agents' comments on the PACT path (PACT v2.0.3 §7.1 `POST /api/pact/{docId}/comments`, and `GET` to list),
in the document's comments: a joined agent's comment is by its name, on its section (the comment's
paragraphId), and shows in the comment search and on the review page like any other. The comments scopes
apply, as they do to /api/comments."""

from __future__ import annotations

from aiohttp import web

from domain.documents import comments
from web.docs.agents.paths import doc_id, document_route
from web.docs.auth import caller
from web.kernel.access import Service
from web.kernel.comments import CommentBody, CommentsQuery, PactComment, PactCommentList
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()
route = document_route(routes)


@route(
    "POST",
    "/comments",
    summary="Comment as the key's agent on a section (or on the document as a whole)",
    body=CommentBody,
    response=PactComment,
    status=201,
    errors={
        409: "sectionId names a section of a document still being converted",
        422: "The document's conversion failed: it has no sections",
    },
    access=Service("comments:write"),
)
async def add(request: web.Request, body: CommentBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        comment = await comments.add_as_agent(
            session, who, doc_id(request), section_id=body.sectionId, content=body.content
        )
    return PactComment.of(comment)


@route(
    "GET",
    "/comments",
    summary="The document's comments (people's, keys' and agents'), oldest first, optionally of one section",
    query=CommentsQuery,
    response=PactCommentList,
    access=Service("comments:read"),
)
async def list_comments(request: web.Request, query: CommentsQuery) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        found = await comments.list_on(
            session, who, doc_id(request), section_id=query.sectionId, limit=query.limit, offset=query.offset
        )
    return PactCommentList.of(found)
