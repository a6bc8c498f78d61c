"""Request models of proposals, voting, collaboration records, bounty and wallet."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from web.hub.schemas import Model, PageQuery

SectionId = Annotated[str, Field(min_length=1, max_length=256, description="A section id such as sec:answer")]


class ProposalCreateBody(Model):
    sectionId: SectionId
    newContent: str = Field(min_length=1, max_length=50_000, description="The section's new body (Markdown).")
    summary: str = Field(min_length=1, max_length=2000)
    ttl: int = Field(default=300, ge=30, le=86_400, description="Seconds before the TTL sweep decides it.")
    citations: list[Annotated[str, Field(min_length=1, max_length=1000)]] = Field(
        default_factory=list, max_length=10
    )
    proposalType: str | None = Field(default=None, max_length=40)


class RejectBody(Model):
    reason: str | None = Field(default=None, max_length=1000)


class ObjectBody(Model):
    reason: str = Field(min_length=1, max_length=1000)


class TopicVoteBody(Model):
    vote: Literal["approve", "reject", "need_info"]
    reason: str | None = Field(default=None, max_length=1000)
    dependencyTitle: str | None = Field(default=None, max_length=500)
    dependencyTier: Literal["empirical", "institutional", "derived", "contested"] | None = None


class DoneBody(Model):
    status: Literal["aligned", "dissenting", "abstain"]
    summary: str | None = Field(default=None, max_length=2000)
    assumptions: list[Annotated[str, Field(min_length=1, max_length=500)]] | None = Field(
        default=None, max_length=20
    )


class IntentBody(Model):
    sectionId: SectionId
    goal: str = Field(min_length=1, max_length=2000)
    category: str | None = Field(default=None, max_length=60)


class ConstraintBody(Model):
    sectionId: SectionId
    boundary: str = Field(min_length=1, max_length=2000)
    category: str | None = Field(default=None, max_length=60)


class SalienceBody(Model):
    sectionId: SectionId
    score: int = Field(ge=0, le=10, description="0 (not my concern) to 10 (must review)")


class DependencyBody(Model):
    dependsOn: str = Field(min_length=1, max_length=36, description="Id of the topic depended on")
    relationship: Literal["builds_on", "assumes", "refines", "contradicts"] = "builds_on"
    justification: str = Field(min_length=1, max_length=2000)


class BountyBody(Model):
    # Strict: "50" (a string) and true are refused, not coerced; inf and NaN never reach the domain.
    amount: float = Field(strict=True, allow_inf_nan=False, description="Whole tokens, 10 to 100,000")


class VerifyBody(Model):
    status: Literal["current", "amended", "repealed"]
    notes: str | None = Field(default=None, max_length=2000)


class SectionFilter(Model):
    sectionId: str | None = Field(default=None, max_length=256)


class ProposalListQuery(PageQuery):
    pass
