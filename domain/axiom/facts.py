"""Verified facts: topics that reached consensus (or became stable), with provenance, citations and
consensus metadata, filtered by tier, jurisdiction prefix and full-text query."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import false, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.axiom import fulltext
from domain.consensus import sections
from domain.consensus.models import Proposal, ProposalVote
from domain.kernel.errors import BadRequest, NotFound
from domain.topics.models import Topic, TopicDependency, TopicParticipant
from domain.topics.store import REACHED, Tier


@dataclass(frozen=True)
class Fact:
    """A topic that reached consensus, with the citations of the proposals merged into it."""

    topic: Topic
    citations: list[str]


@dataclass(frozen=True)
class FactList:
    facts: list[Fact]
    total: int
    limit: int
    offset: int

    @property
    def has_more(self) -> bool:
        return self.offset + len(self.facts) < self.total


@dataclass(frozen=True)
class Dependency:
    fact_id: str
    relationship: str
    title: str
    tier: str
    status: str


@dataclass(frozen=True)
class FactDetail:
    fact: Fact
    sections: list[dict[str, Any]]  # consensus.sections.tree, with content
    dependencies: list[Dependency]
    participants: int
    merged_proposals: int
    votes: int


async def _citations(session: AsyncSession, topic_ids: list[str]) -> dict[str, list[str]]:
    """Citations carried by the merged proposals that shaped each topic, in merge order."""
    out: dict[str, list[str]] = {t: [] for t in topic_ids}
    if not topic_ids:
        return out
    rows = await session.execute(
        select(Proposal.resource_id, Proposal.citations)
        .where(
            Proposal.resource_type == "topic",
            Proposal.resource_id.in_(topic_ids),
            Proposal.status == "merged",
        )
        .order_by(Proposal.resolved_at, Proposal.created_at)
    )
    for topic_id, cites in rows:
        for c in cites or []:
            if c not in out[topic_id]:
                out[topic_id].append(c)
    return out


def check_filters(*, tier: str | None, q: str | None) -> None:
    """Reject bad filters before a credit is spent."""
    if tier is not None and tier not in set(Tier):
        raise BadRequest(f"tier must be one of {', '.join(Tier)}", code="invalid_field", field="tier")
    if q is not None and q.strip() and not fulltext.has_words(q):
        raise BadRequest("q has no searchable words", code="invalid_field", field="q")


async def list_facts(
    session: AsyncSession,
    *,
    tier: str | None,
    jurisdiction: str | None,
    q: str | None,
    limit: int,
    offset: int,
) -> FactList:
    check_filters(tier=tier, q=q)
    stmt = select(Topic).where(Topic.status.in_(REACHED))
    if tier:
        stmt = stmt.where(Topic.tier == tier)
    if jurisdiction:
        stmt = stmt.where(Topic.jurisdiction.startswith(jurisdiction, autoescape=True))
    order: list[Any] = [Topic.consensus_since.desc(), Topic.created_at.desc(), Topic.id.desc()]
    if q is not None and q.strip():
        matches = fulltext.topic_matches(session, q)
        if matches is None:  # words, but only excluded ones or `or`: nothing to look for, nothing found
            stmt = stmt.where(false())
        else:
            sub = matches.subquery()
            stmt = stmt.join(sub, sub.c.topic_id == Topic.id)
            order = [sub.c.relevance.desc(), *order]
    total = await session.scalar(select(func.count()).select_from(stmt.subquery())) or 0
    rows = list((await session.scalars(stmt.order_by(*order).limit(limit).offset(offset))).all())
    cites = await _citations(session, [t.id for t in rows])
    return FactList([Fact(t, cites[t.id]) for t in rows], total, limit, offset)


async def get_fact(session: AsyncSession, fact_id: str) -> FactDetail:
    topic = await session.get(Topic, fact_id) if 0 < len(fact_id) <= 36 else None
    if topic is None or topic.status not in REACHED:
        raise NotFound(
            f"fact {fact_id} not found: no topic with this id has reached consensus",
            code="fact_not_found",
        )
    cites = (await _citations(session, [topic.id]))[topic.id]
    deps = (
        await session.execute(
            select(
                TopicDependency.depends_on_id,
                TopicDependency.relationship,
                Topic.title,
                Topic.tier,
                Topic.status,
            )
            .join(Topic, Topic.id == TopicDependency.depends_on_id)
            .where(TopicDependency.topic_id == topic.id)
        )
    ).all()
    participants = await session.scalar(
        select(func.count()).select_from(TopicParticipant).where(TopicParticipant.topic_id == topic.id)
    )
    merged = await session.scalar(
        select(func.count())
        .select_from(Proposal)
        .where(
            Proposal.resource_type == "topic", Proposal.resource_id == topic.id, Proposal.status == "merged"
        )
    )
    votes = await session.scalar(
        select(func.count())
        .select_from(ProposalVote)
        .join(Proposal, Proposal.id == ProposalVote.proposal_id)
        .where(Proposal.resource_type == "topic", Proposal.resource_id == topic.id)
    )
    return FactDetail(
        Fact(topic, cites),
        sections.tree(topic.content, with_content=True),
        [Dependency(*d) for d in deps],
        participants or 0,
        merged or 0,
        votes or 0,
    )
