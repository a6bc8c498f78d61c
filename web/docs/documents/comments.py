"""Comments on documents: search, create, resolve."""

from __future__ import annotations

from aiohttp import web

from domain.documents import comments
from web.docs.auth import caller
from web.docs.schemas import (
    CommentBody,
    CommentList,
    CommentOut,
    CommentSearchQuery,
)
from web.kernel.access import Service
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()

AUTH = {401: "Missing, invalid or revoked API key", 403: "The key lacks the scope"}


@routes.route(
    "GET",
    "/api/comments/search",
    summary="Search comments by documentId, resolved and author",
    tags=["Comments"],
    query=CommentSearchQuery,
    response=CommentList,
    access=Service("comments:read"),
    errors={**AUTH, 404: "No document with this documentId in the organisation"},
)
async def search_comments(request: web.Request, query: CommentSearchQuery) -> Answer:
    who = caller(request)
    async with runtime(request).db.read() as session:
        result = await comments.search(
            session,
            who,
            document_id=query.documentId,
            resolved=query.resolved,
            author=query.author,
            page=query.page,
            page_size=query.pageSize,
        )
    return CommentList.of(result)


@routes.route(
    "POST",
    "/api/comments",
    summary="Comment on a document (optionally on a paragraph)",
    tags=["Comments"],
    body=CommentBody,
    response=CommentOut,
    status=201,
    access=Service("comments:write"),
    errors={**AUTH, 404: "No such document", 422: "paragraphId is not a section of the document"},
)
async def create_comment(request: web.Request, body: CommentBody) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        made = await comments.create(
            session,
            who,
            body.documentId,
            text=body.text,
            paragraph_id=body.paragraphId,
            author=body.author,
        )
    return CommentOut.of(made)


@routes.route(
    "PUT",
    "/api/comments/{id}/resolve",
    summary="Resolve a comment (the document's owner or the comment's author only)",
    tags=["Comments"],
    response=CommentOut,
    access=Service("comments:write"),
    errors={401: AUTH[401], 403: "Scope missing, or neither owner nor author", 404: "No such comment"},
)
async def resolve_comment(request: web.Request) -> Answer:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        resolved = await comments.resolve(session, who, request.match_info["id"])
    return CommentOut.of(resolved)
