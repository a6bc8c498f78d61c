"""Paths of the agent operations on one document: `/api/tap/{docId}/...`, aliased as `/api/pact/{docId}/...`
(the spec's example paths), each declaring the service-key scope it needs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from web.kernel.access import Service
from web.kernel.routing import Endpoint, Routes

AUTH = {401: "Missing, invalid or revoked API key", 403: "The key lacks the scope, or has not joined"}
NOT_FOUND = {404: "No such document (or section) in the key's organisation"}
TAGS = ["Agents on a document"]


def paths(suffix: str) -> tuple[str, list[str]]:
    return f"/api/tap/{{docId}}{suffix}", [f"/api/pact/{{docId}}{suffix}"]


def doc_id(request: web.Request) -> str:
    return request.match_info["docId"]


def document_route(table: Routes) -> Callable[..., Callable[[Endpoint], Endpoint]]:
    """A `route(method, suffix, ...)` declaring operations of `table` under both path families."""

    def route(method: str, suffix: str, *, access: Service, **kw: Any) -> Callable[[Endpoint], Endpoint]:
        path, aliases = paths(suffix)
        errors = {**AUTH, **NOT_FOUND, **kw.pop("errors", {})}
        return table.route(method, path, tags=TAGS, access=access, errors=errors, aliases=aliases, **kw)

    return route
