"""Identifiers: the one form an id is made in and the one canonicaliser every lookup reads a given id with,
so that a malformed id is a plain 404 and never reaches SQL."""

from __future__ import annotations

import re
import uuid

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_NAMED = re.compile(r"^[A-Za-z0-9_.:-]{1,36}$")


def new_id() -> str:
    """A new id: a random UUID, lower case, with its hyphens (8-4-4-4-12)."""
    return str(uuid.uuid4())


def canonical_id(value: str) -> str | None:
    """The id in the form new_id() makes, or None when `value` cannot be one. It is read as sent, trimmed of
    white space and in any case; other spellings of a UUID (braces, urn:uuid:, no hyphens) are not ids
    the API hands out, and are None."""
    value = value.strip().lower()
    return value if _UUID.match(value) else None


def canonical_ref(value: str) -> str | None:
    """A proposal's id as its row holds it: new_id()'s lower-case UUID, or the name a client gave it (the PACT
    conformance lab's `prop_xyz`: letters, digits and `_.:-`, at most 36), or None when it can be neither."""
    return canonical_id(value) or (value.strip() if _NAMED.match(value.strip()) else None)
