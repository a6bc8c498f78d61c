"""Service-key authentication and scope checks for the document API (spec §5)."""

from __future__ import annotations

from aiohttp import web

from domain.documents import servicekeys
from domain.documents.access import Caller
from web.kernel.request import context, presented_key, runtime


async def caller(request: web.Request, scope: str) -> Caller:
    """The caller's key (401 when missing, invalid or revoked; 403 without `scope`)."""
    async with runtime(request).db.read() as session:
        key = await servicekeys.authenticate(session, presented_key(request))
    servicekeys.require_scope(key, scope)
    return Caller(
        ctx=context(request, servicekeys.actor_of(key)), org_id=key.org_id, key_id=key.id, name=key.name
    )
