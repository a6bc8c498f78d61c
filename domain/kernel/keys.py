"""API keys: random secrets shown once; only their SHA-256 is stored and compared."""

from __future__ import annotations

import hashlib
import secrets


def generate(prefix: str) -> str:
    return prefix + secrets.token_hex(24)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()
