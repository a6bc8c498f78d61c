"""Share links of a document: create one, look one up by its token."""

from __future__ import annotations

from aiohttp import web

from domain.documents import sharing
from web.docs.auth import caller
from web.docs.schemas import (
    ShareLinkBody,
    ShareLinkLookup,
    ShareLinkOut,
)
from web.kernel.access import Service
from web.kernel.request import runtime
from web.kernel.routing import Routes, json_response

routes = Routes()

AUTH = {401: "Missing, invalid or revoked API key", 403: "The key lacks the scope"}


def _base_url(request: web.Request) -> str:
    return f"{request.scheme}://{request.host}"


@routes.route(
    "POST",
    "/api/documents/{id}/share-link",
    summary="Create a share link (permission, access mode, expiry)",
    tags=["Sharing"],
    body=ShareLinkBody,
    response=ShareLinkOut,
    status=201,
    access=Service("documents:write"),
    errors={**AUTH, 404: "No such document in the key's organisation"},
    aliases=["/api/masterdocuments/{id}/share-link"],
)
async def create_share_link(request: web.Request, body: ShareLinkBody) -> web.Response:
    who = caller(request)
    async with runtime(request).db.transaction() as session:
        result = await sharing.create(
            session, who, request.match_info["id"], body.model_dump(), base_url=_base_url(request)
        )
    return json_response(result, status=201)


@routes.route(
    "GET",
    "/api/masterdocuments/share-link/{token}",
    summary="Look up a share link by its token (unknown or expired: 404)",
    tags=["Sharing"],
    response=ShareLinkLookup,
    access=Service("documents:read"),
    errors={**AUTH, 404: "Unknown or expired token"},
    aliases=["/api/documents/share-link/{token}"],
)
async def lookup_share_link(request: web.Request) -> web.Response:
    who = caller(request)
    async with runtime(request).db.read() as session:
        result = await sharing.lookup(session, who, request.match_info["token"])
    return json_response(result)
