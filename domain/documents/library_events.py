"""The stored data of the document library (domain/documents/library.py, proposals.py `set_approval`), built
here and nowhere else: the audit trail's snapshot of an uploaded document and of a document's approval
settings. Audit entries are stored records, so their keys and formats never change. The document API's wire
models read the document's row (web/docs/schemas.py `DocumentSummary.answer`), not these."""

from __future__ import annotations

from typing import Any

from domain.consensus import policies
from domain.documents.models import Document, DocumentStatus
from domain.kernel.clock import iso


def approval(settings: policies.Approval) -> dict[str, Any]:
    """A document's approval settings, as the approval change's audit entry stores them."""
    return {"approvalPolicy": settings.policy.value, "allowSelfApproval": settings.allow_self_approval}


def snapshot(doc: Document) -> dict[str, Any]:
    """The document as its upload's audit entry stores it (`error` only on a failed one)."""
    out = {
        "id": doc.id,
        "title": doc.title,
        "status": doc.status,
        "createdAt": iso(doc.created_at),
        "updatedAt": iso(doc.updated_at),
        "tags": list(doc.tags or []),
        "format": doc.kind,
        "mediaType": doc.media_type,
        "sizeBytes": doc.size_bytes,
        "version": doc.version,
        **approval(policies.of(doc)),
    }
    if doc.status == DocumentStatus.FAILED:
        out["error"] = doc.error
    return out
