"""The stored data of share links (domain/documents/sharing.py), built here and nowhere else: the events
`pact.share-link.created` / `.revoked` and `pact.proposal.decided` (a share link's holder deciding), and the
link's audit entries.

An event's data is hashed into its stream's chain (domain/kernel/events.py): a key's name, its order and its
value's format are part of the stored record, so they never change, or old events would not verify; audit
entries are stored records too. The document API's wire models read the link's row (web/docs/schemas.py
`ShareLink.answer`), not these."""

from __future__ import annotations

from typing import Any

from domain.documents.models import ShareLink, ShareLinkSession
from domain.kernel.clock import iso


def link(row: ShareLink) -> dict[str, Any]:
    """The link's terms: pact.share-link.created, and its creation's audit entry."""
    return {
        "id": row.id,
        "documentId": row.document_id,
        "permission": row.permission,
        "accessMode": row.access_mode,
        "public": row.public,
        "reviewerEmails": list(row.reviewer_emails or []),
        "allowedDomain": row.allowed_domain,
        "expiresAt": iso(row.expires_at),
    }


def owned(row: ShareLink, state: str) -> dict[str, Any]:
    """The link with its dates and `state`, as its revocation's audit entry stores it before and after."""
    return {
        **link(row),
        "createdAt": iso(row.created_at),
        "revokedAt": iso(row.revoked_at),
        "state": state,
    }


def revoked(row: ShareLink) -> dict[str, Any]:
    """pact.share-link.revoked"""
    return {"linkId": row.id}


def verified(email: str, visit: ShareLinkSession) -> dict[str, Any]:
    """The audit entry's `after` of a proven address."""
    return {"email": email, "sessionId": visit.id}


def decided(
    proposal_id: str, *, decision: str, note: str, reviewer: str | None, link_id: str
) -> dict[str, Any]:
    """pact.proposal.decided (a share link's holder deciding an objected proposal), and its audit entry."""
    return {
        "proposalId": proposal_id,
        "decision": decision,
        "note": note,
        "reviewer": reviewer,
        "shareLinkId": link_id,
    }
