"""Share links of a document: permission, access mode, expiry; tokens are stored hashed."""

from __future__ import annotations

import re
import secrets
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.documents import library
from domain.documents.access import Caller
from domain.documents.models import Document, ShareLink
from domain.kernel import audit, events, keys
from domain.kernel.clock import iso, new_id, utcnow
from domain.kernel.errors import BadRequest, NotFound

TOKEN_PREFIX = "shr_"
_EMAIL = re.compile(
    r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+)$"
)
_DOMAIN = re.compile(r"^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


def _domain(value: str) -> str:
    value = value.strip().lower().lstrip("@")
    if not _DOMAIN.match(value):
        raise BadRequest(
            f"allowedDomain {value!r} is not a domain name like example.com", field="allowedDomain"
        )
    return value


def _emails(values: list[str]) -> list[str]:
    out: list[str] = []
    for i, raw in enumerate(values):
        email = raw.strip()
        match = _EMAIL.match(email)
        if not match or len(email) > 254:
            raise BadRequest(
                f"reviewerEmails[{i}] {raw!r} is not an email address", field=f"reviewerEmails.{i}"
            )
        local, domain = email.rsplit("@", 1)
        out.append(f"{local}@{domain.lower()}")
    return list(dict.fromkeys(out))


async def create(
    session: AsyncSession, caller: Caller, document_id: str, body: dict[str, Any], *, base_url: str
) -> dict[str, Any]:
    doc = await library.get(session, caller, document_id)
    mode = body["accessMode"]
    emails = _emails(body.get("reviewerEmails") or [])
    domain = _domain(body["allowedDomain"]) if body.get("allowedDomain") else None
    if mode == "closed-individual" and not emails:
        raise BadRequest("accessMode closed-individual needs reviewerEmails", field="reviewerEmails")
    if mode == "closed-org":
        if domain is None:
            raise BadRequest("accessMode closed-org needs allowedDomain", field="allowedDomain")
        outside = [e for e in emails if not e.endswith("@" + domain)]
        if outside:
            raise BadRequest(f"reviewerEmails outside {domain}: {', '.join(outside)}", field="reviewerEmails")
    if mode == "open" and (emails or domain):
        raise BadRequest("accessMode open takes neither reviewerEmails nor allowedDomain", field="accessMode")
    token = TOKEN_PREFIX + secrets.token_urlsafe(24)
    now = utcnow()
    link = ShareLink(
        id=new_id(),
        document_id=doc.id,
        org_id=doc.org_id,
        token_hash=keys.hash_key(token),
        permission=body["permission"],
        access_mode=mode,
        public=bool(body.get("public")),
        reviewer_emails=emails,
        allowed_domain=domain,
        created_by=caller.key_id,
        created_at=now,
        expires_at=now + timedelta(hours=int(body.get("expiresInHours") or 168)),
    )
    session.add(link)
    await session.flush()
    view = public_view(link)
    await events.append(session, library.stream(doc.id), "pact.share-link.created", caller.ctx, data=view)
    await audit.record(session, caller.ctx, "share_link.create", "share_link", link.id, after=view)
    return {
        "token": token,
        "url": f"{base_url}/api/masterdocuments/share-link/{token}",
        "expiresAt": iso(link.expires_at),
        **view,
    }


def public_view(link: ShareLink) -> dict[str, Any]:
    return {
        "id": link.id,
        "documentId": link.document_id,
        "permission": link.permission,
        "accessMode": link.access_mode,
        "public": link.public,
        "reviewerEmails": list(link.reviewer_emails or []),
        "allowedDomain": link.allowed_domain,
        "expiresAt": iso(link.expires_at),
    }


async def lookup(session: AsyncSession, caller: Caller, token: str) -> dict[str, Any]:
    """A live link of the caller's organisation (or a public one); unknown or expired → 404."""
    link = None
    if token.startswith(TOKEN_PREFIX) and len(token) <= 100:
        link = await session.scalar(select(ShareLink).where(ShareLink.token_hash == keys.hash_key(token)))
    if link is None or link.expires_at <= utcnow() or (link.org_id != caller.org_id and not link.public):
        raise NotFound("share link not found or expired", code="share_link_not_found")
    doc = await session.get(Document, link.document_id)
    if doc is None:
        raise NotFound("share link not found or expired", code="share_link_not_found")
    return {**public_view(link), "title": doc.title, "status": doc.status}
