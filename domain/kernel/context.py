"""Who is acting and on behalf of which request; passed from the edge into every service call."""

from __future__ import annotations

from dataclasses import dataclass

from domain.kernel.errors import Unauthorized


@dataclass(frozen=True)
class Actor:
    id: str
    name: str
    key_hash: str
    kind: str = "agent"  # agent | service | staff | person | system
    scope: str | None = None  # the one resource a scoped key (an invite's) may act on; None: no limit


@dataclass(frozen=True)
class Context:
    actor: Actor | None = None
    request_id: str | None = None
    country: str | None = None

    def require_actor(self) -> Actor:
        if self.actor is None:
            raise Unauthorized("missing or invalid API key")
        return self.actor


SYSTEM = Context(actor=Actor(id="system", name="system", key_hash="", kind="system"))
