"""The document API's guard: service keys and signed-in people (spec §5). A service key (X-Api-Key or
Bearer) or a person's access token (a JWT from POST /api/auth/login, as Bearer) is checked before the
request's input is read: missing, invalid, revoked or expired answers 401 and a credential without the
declared scope 403 (problem+json). The principal is looked up once and cached on the request for the
handler (`caller`) and MCP."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from domain.documents import servicekeys
from domain.documents.access import Caller
from domain.documents.models import ServiceKey
from domain.kernel.errors import Forbidden
from domain.people import user_sessions as sessions
from web.docs.oauth import urls as oauth_urls
from web.kernel.access import Access, Guard, Service, principal
from web.kernel.request import context, guard_session, presented_key, runtime


@dataclass(frozen=True)
class ServicePrincipal:
    """Who is calling: a service key (`key`) or a signed-in person (`person`), with the scopes that apply."""

    caller: Caller
    scopes: frozenset[str]
    key: ServiceKey | None = None
    person: sessions.Person | None = None


# Where a document-scoped key may act (web/docs/agents/paths.py).
AGENT_PATHS = ("/api/tap/", "/api/pact/")
SERVICE = web.RequestKey("service_principal", ServicePrincipal)
# The scope a request was refused for (403), for the WWW-Authenticate challenge (web/docs/oauth/challenge.py).
MISSING_SCOPE = web.RequestKey("missing_scope", str)


def bearer_token(request: web.Request) -> str | None:
    """The Authorization: Bearer credential when it is a person's access token (a JWT), else None."""
    auth = request.headers.get("Authorization", "")
    token = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
    return (
        token if token and sessions.looks_like_jwt(token) and not request.headers.get("X-Api-Key") else None
    )


async def person_of(request: web.Request, token: str) -> sessions.Person:
    """The person of an access token: a sign-in's, or one issued to an OAuth client for this server's MCP
    endpoint (its audience)."""
    async with guard_session(request) as session:
        return await sessions.authenticate(
            session, runtime(request).settings, token, resource=oauth_urls.mcp_resource(request)
        )


async def service_principal(request: web.Request) -> ServicePrincipal:
    """The live service key or signed-in person of the request, or 401."""
    if SERVICE in request:
        return request[SERVICE]
    token = bearer_token(request)
    if token is not None:
        person = await person_of(request, token)
        caller = Caller(
            ctx=context(request, person.actor),
            org_id=person.user.org_id,
            key_id=person.user.id,
            name=person.user.email,
        )
        found = request[SERVICE] = ServicePrincipal(caller, person.scopes, person=person)
        return found
    async with guard_session(request) as session:
        key = await servicekeys.authenticate(session, presented_key(request))
    if key.document_id is not None:
        confine_to_document(request, key.document_id)
    caller = Caller(
        ctx=context(request, servicekeys.actor_of(key)),
        org_id=key.org_id,
        key_id=key.id,
        name=key.name,
        principal=key.principal,
    )
    found = request[SERVICE] = ServicePrincipal(caller, frozenset(key.scopes), key=key)
    return found


def confine_to_document(request: web.Request, document_id: str) -> None:
    """A key an invite minted (POST …/join-token) acts on its one document's agent paths and nothing else:
    not another document, not the library, not MCP (403)."""
    on_agent_path = request.path.startswith(AGENT_PATHS)
    if not on_agent_path or request.match_info.get("docId") != document_id:
        raise Forbidden(
            f"this key was issued by an invite to document {document_id} and works only on its "
            f"/api/pact/{document_id}/… (or /api/tap/{document_id}/…) paths",
            code="key.scoped",
            documentId=document_id,
        )


def require_scope(found: ServicePrincipal, scope: str) -> None:
    if scope not in found.scopes:
        whose = "this key" if found.key is not None else "this person"
        raise Forbidden(f"{whose} lacks the scope {scope}", code="insufficient_scope", requiredScope=scope)


async def check_service(request: web.Request, access: Service) -> None:
    found = await service_principal(request)
    if access.scope not in found.scopes:
        request[MISSING_SCOPE] = access.scope
    require_scope(found, access.scope)


GUARDS: dict[type[Access], Guard] = {Service: check_service}


def caller(request: web.Request) -> Caller:
    """The caller whose key or access token the route's Service(...) access admitted."""
    return principal(request, SERVICE).caller
