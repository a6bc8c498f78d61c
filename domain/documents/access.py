"""Who is calling the document API: a live service key of one organisation."""

from __future__ import annotations

from dataclasses import dataclass

from domain.kernel.context import Context


@dataclass(frozen=True)
class Caller:
    ctx: Context
    org_id: str
    key_id: str
    name: str
    principal: str | None = None  # the DID the key acts for, when its operator attested one
