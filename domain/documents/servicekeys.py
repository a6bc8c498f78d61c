"""Organisations and their scoped `svc_sk_` service keys (created by the operator's command line)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.documents.models import Organisation, ServiceKey
from domain.kernel import audit, keys, principals
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import Actor, Context
from domain.kernel.errors import BadRequest, Forbidden, NotFound, Unauthorized
from domain.kernel.ids import new_id

PREFIX = "svc_sk_"
# spec/document-api.md §5
SCOPES = (
    "documents:read",
    "documents:write",
    "comments:read",
    "comments:write",
    "tap:read",
    "tap:write",
)


def parse_scopes(raw: str | list[str]) -> list[str]:
    items = raw.split(",") if isinstance(raw, str) else raw
    scopes = [s.strip() for s in items if s.strip()]
    if not scopes:
        raise BadRequest("at least one scope is needed", field="scopes")
    if "all" in scopes or "*" in scopes:
        return list(SCOPES)
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown:
        raise BadRequest(f"unknown scope(s) {', '.join(unknown)}; known: {', '.join(SCOPES)}", field="scopes")
    return [s for s in SCOPES if s in scopes]


async def organisation(session: AsyncSession, name: str, *, create: bool) -> Organisation:
    name = " ".join(name.split())
    if not name:
        raise BadRequest("organisation name is empty", field="org")
    org = await session.scalar(select(Organisation).where(Organisation.name_key == name.casefold()))
    if org is None:
        if not create:
            raise NotFound(f"no organisation named {name!r}", code="organisation_not_found")
        org = Organisation(id=new_id(), name=name, name_key=name.casefold(), created_at=utcnow())
        session.add(org)
        await session.flush()
    return org


async def create(
    session: AsyncSession,
    ctx: Context,
    *,
    org_name: str,
    scopes: list[str],
    name: str | None = None,
    principal: str | None = None,
) -> dict[str, Any]:
    """A new key (its secret returned once). `principal`: the DID the operator attests the key acts for."""
    attested = principals.parse(principal) if principal is not None else None
    org = await organisation(session, org_name, create=True)
    secret = keys.generate(PREFIX)
    key = ServiceKey(
        id=new_id(),
        org_id=org.id,
        name=(name or f"{org.name} key").strip()[:200],
        key_hash=keys.hash_key(secret),
        key_prefix=secret[:12],
        scopes=scopes,
        created_at=utcnow(),
        principal=attested,
    )
    session.add(key)
    await session.flush()
    audit.record(session, ctx, "service_key.create", "service_key", key.id, after=public(key, org))
    return {**public(key, org), "apiKey": secret}


def public(key: ServiceKey, org: Organisation) -> dict[str, Any]:
    """Stored format: the key as its audit entries keep it (never the secret), and as `concord keys list` and
    `revoke` print it; no HTTP answer carries it."""
    return {
        "id": key.id,
        "name": key.name,
        "organisation": org.name,
        "organisationId": org.id,
        "prefix": key.key_prefix,
        "scopes": list(key.scopes),
        "principal": key.principal,
        "createdAt": iso(key.created_at),
        "revokedAt": iso(key.revoked_at),
    }


async def list_keys(session: AsyncSession) -> list[dict[str, Any]]:
    rows = await session.execute(
        select(ServiceKey, Organisation)
        .join(Organisation, Organisation.id == ServiceKey.org_id)
        .order_by(ServiceKey.created_at)
    )
    return [public(k, o) for k, o in rows]


async def revoke(session: AsyncSession, ctx: Context, key_id: str) -> dict[str, Any]:
    key = await session.get(ServiceKey, key_id.strip())
    if key is None:
        raise NotFound(f"no service key with id {key_id}", code="key_not_found")
    org = await session.get_one(Organisation, key.org_id)  # the foreign key guarantees it
    before = public(key, org)
    if key.revoked_at is None:
        key.revoked_at = utcnow()
    audit.record(session, ctx, "service_key.revoke", "service_key", key.id, before=before)
    return public(key, org)


async def authenticate(session: AsyncSession, secret: str | None) -> ServiceKey:
    """The live key for a presented secret, or 401 (missing, malformed, unknown or revoked)."""
    if not secret:
        raise Unauthorized("missing API key: send 'X-Api-Key: svc_sk_…'", code="missing_api_key")
    if not secret.startswith(PREFIX):
        raise Unauthorized("invalid API key: service keys start with svc_sk_", code="invalid_api_key")
    key = await session.scalar(select(ServiceKey).where(ServiceKey.key_hash == keys.hash_key(secret)))
    if key is None:
        raise Unauthorized("invalid API key", code="invalid_api_key")
    if key.revoked_at is not None:
        raise Unauthorized("this API key has been revoked", code="revoked_api_key")
    return key


def require_scope(key: ServiceKey, scope: str) -> None:
    if scope not in key.scopes:
        raise Forbidden(f"this key lacks the scope {scope}", code="insufficient_scope", requiredScope=scope)


def actor_of(key: ServiceKey) -> Actor:
    return Actor(id=key.id, name=key.name, key_hash=key.key_hash, kind="service")
