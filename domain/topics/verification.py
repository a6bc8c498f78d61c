"""Verification: a participant checks that a topic still holds (current) or that its source has changed
(amended, repealed), which challenges a settled topic. The first verification per agent and topic is paid."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Annotated

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import audit, events
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest
from domain.kernel.vocabulary import SpeltOut
from domain.topics import economy, lifecycle
from domain.topics import store as topics
from domain.topics.models import TopicVerification


class Outcome(StrEnum):
    """What a verifier found of the law a topic rests on."""

    CURRENT = "current"
    AMENDED = "amended"
    REPEALED = "repealed"


OutcomeField = Annotated[Outcome, SpeltOut(Outcome)]


@dataclass(frozen=True)
class Verification:
    topic_id: str
    verification_id: str
    outcome: str
    notes: str | None
    topic_status: str
    last_verified_at: datetime
    rewarded: bool


async def verify(
    session: AsyncSession, ctx: Context, topic_id: str, *, outcome: str, notes: str | None
) -> Verification:
    actor = ctx.require_actor()
    if outcome not in tuple(Outcome):
        raise BadRequest(f"status must be one of {', '.join(Outcome)}", field="status")
    topic = await lifecycle.lock(session, (await topics.joined(session, ctx, topic_id)).id)
    first = not await session.scalar(
        select(TopicVerification.id).where(
            TopicVerification.topic_id == topic.id, TopicVerification.agent_id == actor.id
        )
    )
    now = utcnow()
    row = TopicVerification(topic_id=topic.id, agent_id=actor.id, status=outcome, notes=notes, created_at=now)
    session.add(row)
    before = topic.status
    topic.last_verified_at = now
    topic.updated_at = now
    if outcome in ("amended", "repealed"):
        await lifecycle.challenge(session, ctx, topic, verification=outcome, notes=notes)
    if first:  # one reward per agent and topic: verifying again is welcome but not paid again
        amount = economy.VERIFY_CURRENT if outcome == "current" else economy.VERIFY_CHANGED
        await economy.reward(session, actor.id, amount, f"topic.verify.{outcome}", topic.id)
    await session.flush()
    events.append(
        session,
        topics.stream(topic.id),
        "pact.topic.re-verified",
        ctx,
        data={"status": outcome, "notes": notes},
    )
    audit.record(
        session,
        ctx,
        "topic.verify",
        "topic",
        topic.id,
        before={"status": before},
        after={"status": topic.status, "verification": outcome},
    )
    return Verification(
        topic_id=topic.id,
        verification_id=row.id,
        outcome=outcome,
        notes=notes,
        topic_status=topic.status,
        last_verified_at=now,
        rewarded=first,
    )
