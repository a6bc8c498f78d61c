"""Topic bounties: tokens escrowed on a topic and paid out when it reaches consensus.

Split (reference/pact-notes.md §12): 40% to the author of the last merged proposal, 20% into the escrow of
the topics it `assumes` (as new bounties there), the rest to aligned agents with harmonic weights
1/(k+1) in the order they signalled; rounding dust goes to the first aligned agent. Shares with no
recipient fall through to the next group, so the escrow is always emptied exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.agents.models import Agent
from domain.consensus.models import Proposal
from domain.kernel import audit, events, ledger
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest
from domain.kernel.models import LedgerEntry, Wallet
from domain.kernel.sqlutil import for_update
from domain.topics import economy
from domain.topics import store as topics
from domain.topics.models import Topic, TopicDependency, TopicParticipant


@dataclass(frozen=True)
class Contributor:
    agent_id: str
    agent_name: str
    amount: int
    first_funded_at: datetime


@dataclass(frozen=True)
class Pool:
    """A topic's bounty: what its escrow holds, what it has paid out, and who funded it (first first)."""

    topic_id: str
    escrow: int
    paid: int
    contributors: list[Contributor]


async def fund(session: AsyncSession, ctx: Context, topic_id: str, amount: Any) -> Pool:
    actor = ctx.require_actor()
    topic = await topics.get(session, topic_id)
    # Lock the topic as every other topic write does (payout reads the escrow under this lock).
    topic = await session.scalar(for_update(select(Topic).where(Topic.id == topic.id))) or topic
    if isinstance(amount, bool) or not isinstance(amount, int | float) or amount != int(amount):
        raise BadRequest("amount must be a whole number of tokens", code="invalid_amount", field="amount")
    amount = int(amount)
    if not economy.BOUNTY_MIN <= amount <= economy.BOUNTY_MAX:
        raise BadRequest(
            f"amount must be between {economy.BOUNTY_MIN} and {economy.BOUNTY_MAX}",
            code="invalid_amount",
            field="amount",
        )
    if topic.status == "rejected":
        raise BadRequest("a rejected topic takes no bounty", code="topic_rejected")
    escrow = await economy.escrow_wallet(session, topic.id)
    await ledger.transfer(
        session,
        await economy.agent_wallet(session, actor.id),
        escrow,
        amount,
        "bounty.fund",
        topic_id=topic.id,
    )
    events.append(session, topics.stream(topic.id), "pact.bounty.posted", ctx, data={"amount": amount})
    audit.record(session, ctx, "bounty.fund", "topic", topic.id, after={"amount": amount})
    return await view(session, topic.id)


async def view(session: AsyncSession, topic_id: str) -> Pool:
    topic = await topics.get(session, topic_id)
    escrow = await economy.escrow_wallet(session, topic.id)
    await ledger.write_entries(session)  # this unit of work's own transfers count too
    contributors = (
        await session.execute(
            select(Agent.id, Agent.name, func.sum(LedgerEntry.amount), func.min(LedgerEntry.created_at))
            .join(Wallet, Wallet.id == LedgerEntry.from_wallet)
            .join(Agent, Agent.id == Wallet.owner_id)
            .where(
                LedgerEntry.to_wallet == escrow, LedgerEntry.reason == "bounty.fund", Wallet.kind == "agent"
            )
            .group_by(Agent.id, Agent.name)
            .order_by(func.min(LedgerEntry.created_at))
        )
    ).all()
    paid = int(
        await session.scalar(
            select(func.coalesce(func.sum(LedgerEntry.amount), 0)).where(LedgerEntry.from_wallet == escrow)
        )
        or 0
    )
    return Pool(
        topic_id=topic.id,
        escrow=await ledger.balance(session, escrow),
        paid=paid,
        contributors=[Contributor(a, n, int(s), t) for a, n, s, t in contributors],
    )


def harmonic_split(total: int, n: int) -> list[int]:
    weights = [1 / (k + 1) for k in range(n)]
    shares = [int(total * w / sum(weights)) for w in weights]
    shares[0] += total - sum(shares)
    return shares


async def pay_out(session: AsyncSession, ctx: Context, topic: Topic) -> int:
    escrow = await economy.escrow_wallet(session, topic.id)
    pool = await ledger.balance(session, escrow)
    if pool <= 0:
        return 0
    author = await session.scalar(
        select(Proposal.author_id)
        .where(
            Proposal.resource_type == "topic", Proposal.resource_id == topic.id, Proposal.status == "merged"
        )
        .order_by(Proposal.resolved_at.desc())
        .limit(1)
    )
    assumed = list(
        (
            await session.scalars(
                select(TopicDependency.depends_on_id).where(
                    TopicDependency.topic_id == topic.id, TopicDependency.relationship == "assumes"
                )
            )
        ).all()
    )
    aligned = list(
        (
            await session.scalars(
                select(TopicParticipant.agent_id)
                .where(
                    TopicParticipant.topic_id == topic.id,
                    TopicParticipant.done_status == "aligned",
                    TopicParticipant.left_at.is_(None),
                )
                .order_by(TopicParticipant.done_at, TopicParticipant.id)
            )
        ).all()
    )
    plan: list[tuple[str, int, str]] = []  # (wallet, amount, reason)
    author_share = pool * 40 // 100 if author else 0
    deps_share = pool * 20 // 100 if assumed else 0
    rest = pool - author_share - deps_share
    if not aligned:  # nobody to share the rest with: it goes to the author, else the dependencies
        if author:
            author_share += rest
        elif assumed:
            deps_share += rest
        rest = 0
    if author and author_share:
        plan.append((await economy.agent_wallet(session, author), author_share, "bounty.author"))
    for dep, share in zip(assumed, harmonic_split(deps_share, len(assumed)) if assumed else [], strict=False):
        if share:
            plan.append((await economy.escrow_wallet(session, dep), share, "bounty.dependency"))
    for agent, share in zip(aligned, harmonic_split(rest, len(aligned)) if aligned else [], strict=False):
        if share:
            plan.append((await economy.agent_wallet(session, agent), share, "bounty.aligned"))
    paid = 0
    for wallet, amount, reason in plan:
        await ledger.transfer(session, escrow, wallet, amount, reason, topic_id=topic.id)
        paid += amount
    events.append(
        session,
        topics.stream(topic.id),
        "pact.bounty.distributed",
        ctx,
        data={"pool": pool, "paid": paid, "recipients": len(plan)},
    )
    return paid
