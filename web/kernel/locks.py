"""The wire of section locks, the same on both apps (a topic's and a document's lock answer alike: the PACT
CLI reads `expiresAt` from either). Built from the shared domain results of domain/consensus/locks.py."""

from __future__ import annotations

from pydantic import Field

from domain.consensus import locks
from domain.kernel.clock import iso
from web.kernel.wire import Exact, Timestamp


class Lock(Exact):
    sectionId: str
    lockedBy: str = Field(description="The holder's agentId")
    lockedByName: str
    ttlSeconds: int
    expiresAt: Timestamp

    @classmethod
    def of(cls, lock: locks.Lock) -> Lock:
        return cls(
            sectionId=lock.section_id,
            lockedBy=lock.agent_id,
            lockedByName=lock.agent_name,
            ttlSeconds=lock.ttl_seconds,
            expiresAt=iso(lock.expires_at),
        )


class Unlocked(Exact):
    sectionId: str
    unlocked: bool = Field(description="Always true: the lock is released")

    @classmethod
    def of(cls, released: locks.Unlocked) -> Unlocked:
        return cls(sectionId=released.section_id, unlocked=True)
