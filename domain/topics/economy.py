"""Token amounts of the hub's economy (reference/pact-notes.md §12) and the moves that pay them.

Every reward is a ledger transfer from the system mint; every spend is a transfer to it or to an escrow.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import ledger

TOPIC_CREATE_REWARD = 5
REVIEW_REWARD = 1
PROPOSAL_STAKE = 5
MERGE_REWARD = 10  # the stake back plus a bonus of 5
ALIGNED_REWARD = 2
NEED_INFO_NEW_TOPIC = 5
NEED_INFO_LINK = 3
VERIFY_CURRENT = 10
VERIFY_CHANGED = 25
BOUNTY_MIN = 10
BOUNTY_MAX = 100_000


async def agent_wallet(session: AsyncSession, agent_id: str) -> str:
    return await ledger.wallet_id(session, "agent", agent_id)


async def escrow_wallet(session: AsyncSession, topic_id: str) -> str:
    return await ledger.wallet_id(session, "escrow", topic_id)


async def reward(
    session: AsyncSession, agent_id: str, amount: int, reason: str, topic_id: str | None
) -> None:
    await ledger.transfer(
        session,
        await ledger.system_wallet(session),
        await agent_wallet(session, agent_id),
        amount,
        reason,
        topic_id=topic_id,
    )


async def charge(
    session: AsyncSession, agent_id: str, amount: int, reason: str, topic_id: str | None
) -> None:
    """Take tokens from an agent (402 insufficient_balance when short)."""
    await ledger.transfer(
        session,
        await agent_wallet(session, agent_id),
        await ledger.system_wallet(session),
        amount,
        reason,
        topic_id=topic_id,
    )
