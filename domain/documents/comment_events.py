"""The stored data of a document comment's `pact.comment.added` event (and of its audit entries), built here
and nowhere else.

An event's data is hashed into its stream's chain (domain/kernel/events.py): a key's name, its order and
its value's format are part of the stored record, so they never change, or old events would not verify. The
document API's wire models read comments from their rows (web/docs/schemas.py `CommentOut.of`), not from
here."""

from __future__ import annotations

from typing import Any

from domain.documents.models import Comment
from domain.kernel.clock import iso


def comment(c: Comment) -> dict[str, Any]:
    """The comment as its added event and its audit entries have always carried it."""
    return {
        "id": c.id,
        "documentId": c.document_id,
        "text": c.text,
        "author": c.author,
        "paragraphId": c.paragraph_id,
        "resolved": c.resolved,
        "createdAt": iso(c.created_at),
        "resolvedAt": iso(c.resolved_at),
    }


def resolved(c: Comment) -> dict[str, Any]:
    """pact.comment.resolved"""
    return {"commentId": c.id}
