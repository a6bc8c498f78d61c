"""Ed25519 keys of the event log's signed roots: reading an operator's key, and naming a public key as a
did:key (multibase base58btc of the multicodec-tagged raw key), which carries the key itself, so whoever
reads a root's `signing_key` can check its signature without fetching anything."""

from __future__ import annotations

import base64
import binascii
from typing import Any

import base58
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

DID_KEY_PREFIX = "did:key:z"
_ED25519_MULTICODEC = b"\xed\x01"


def b64url(raw: bytes) -> str:
    """Unpadded base64url."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    """Bytes from base64 in either alphabet, padded or not (binascii.Error when it is not base64)."""
    compact = "".join(text.split())
    padded = compact + "=" * (-len(compact) % 4)
    return base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)


def parse_private_key(text: str) -> Ed25519PrivateKey:
    """An Ed25519 private key from PKCS#8 PEM, or from base64 (either alphabet) of its 32-byte seed or of
    its PKCS#8 DER. ValueError saying what was wrong otherwise."""
    text = text.strip()
    try:
        if text.startswith("-----BEGIN"):
            key: Any = serialization.load_pem_private_key(text.encode(), password=None)
        else:
            raw = unb64(text)
            if len(raw) == 32:
                key = Ed25519PrivateKey.from_private_bytes(raw)
            else:
                key = serialization.load_der_private_key(raw, password=None)
    except (ValueError, TypeError, binascii.Error) as exc:
        raise ValueError(
            f"not an unencrypted Ed25519 private key (PEM, or base64 of a seed or DER): {exc}"
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"the log signing key must be Ed25519, not {type(key).__name__}")
    return key


def _pem(key: Ed25519PrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def key_id(public: Ed25519PublicKey) -> str:
    """The public key as a did:key (what roots carry as signing_key)."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return DID_KEY_PREFIX + base58.b58encode(_ED25519_MULTICODEC + raw).decode()


def public_key_of(did_key: str) -> Ed25519PublicKey:
    """The Ed25519 public key a did:key names; ValueError when it names none."""
    if not did_key.startswith(DID_KEY_PREFIX):
        raise ValueError("not a did:key with a base58btc (z) key")
    try:
        raw = base58.b58decode(did_key[len(DID_KEY_PREFIX) :])
    except ValueError as exc:
        raise ValueError(f"not base58btc: {exc}") from None
    if not raw.startswith(_ED25519_MULTICODEC) or len(raw) != 34:
        raise ValueError("not an Ed25519 did:key")
    return Ed25519PublicKey.from_public_bytes(raw[2:])


def pem(key: Ed25519PrivateKey) -> str:
    """The private key as unencrypted PKCS#8 PEM."""
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
