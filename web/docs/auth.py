"""The document API's guard: service keys (spec §5). A missing, invalid, revoked or other-kind key
answers 401 and a key without the declared scope 403 (problem+json), before the request's input is
read; the key is looked up once and cached on the request for the handler (`caller`) and MCP."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from domain.documents import servicekeys
from domain.documents.access import Caller
from domain.documents.models import ServiceKey
from web.kernel.access import Access, Guard, Service, principal
from web.kernel.request import context, presented_key, runtime


@dataclass(frozen=True)
class ServicePrincipal:
    key: ServiceKey
    caller: Caller


SERVICE = web.RequestKey("service_principal", ServicePrincipal)


async def service_principal(request: web.Request) -> ServicePrincipal:
    """The live service key of the request, or 401."""
    if SERVICE in request:
        return request[SERVICE]
    async with runtime(request).db.read() as session:
        key = await servicekeys.authenticate(session, presented_key(request))
    caller = Caller(
        ctx=context(request, servicekeys.actor_of(key)), org_id=key.org_id, key_id=key.id, name=key.name
    )
    found = request[SERVICE] = ServicePrincipal(key, caller)
    return found


async def check_service(request: web.Request, access: Service) -> None:
    servicekeys.require_scope((await service_principal(request)).key, access.scope)


GUARDS: dict[type[Access], Guard] = {Service: check_service}


def caller(request: web.Request) -> Caller:
    """The caller whose key the route's Service(...) access admitted."""
    return principal(request, SERVICE).caller
