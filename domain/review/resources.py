"""The resources a reviewer decides on (topics and documents), seen through the consensus engine: load
one with its policy and title, read a section's current text, and decide a proposal as a person."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import engine as consensus
from domain.consensus import sections, sessions
from domain.consensus.models import Proposal
from domain.consensus.policies import Approval
from domain.documents.models import Document
from domain.documents.proposals import POLICY as DOCUMENT_POLICY
from domain.documents.proposals import DocumentResource
from domain.documents.sessions import fabric_of as document_fabric
from domain.kernel import events
from domain.kernel.context import Context
from domain.kernel.errors import NotFound
from domain.kernel.ids import canonical_id
from domain.review.queue import ResourceType
from domain.topics import lifecycle as topic_lifecycle
from domain.topics.consensus import POLICY as TOPIC_POLICY
from domain.topics.consensus import TopicResource
from domain.topics.fabric import fabric_of as topic_fabric
from domain.topics.models import Topic

SOURCES = ResourceType.ALL.types()  # ("topic", "document")
# pact-notes §7: a person's resolution of an escalation (or of a paused proposal) is `pact.human.resolved`.
RESOLVED_EVENT = "pact.human.resolved"


@dataclass(frozen=True)
class Info:
    """What a reviewer sees of a resource: its title and current Markdown (None while not readable)."""

    title: str | None
    markdown: str | None
    version: int | None


def _document_markdown(doc: Document) -> str | None:
    return doc.content if doc.status == "ready" else None


async def infos(session: AsyncSession, wanted: set[tuple[str, str]]) -> dict[tuple[str, str], Info]:
    """Titles and Markdown of many resources in two queries (one per resource type)."""
    topic_ids = {rid for rt, rid in wanted if rt == "topic"}
    doc_ids = {rid for rt, rid in wanted if rt == "document"}
    found: dict[tuple[str, str], Info] = {}
    if topic_ids:
        for t in (await session.scalars(select(Topic).where(Topic.id.in_(topic_ids)))).all():
            found[("topic", t.id)] = Info(t.title, t.content, t.version)
    if doc_ids:
        for d in (await session.scalars(select(Document).where(Document.id.in_(doc_ids)))).all():
            found[("document", d.id)] = Info(d.title, _document_markdown(d), d.version)
    return found


def section_text(markdown: str | None, section_id: str | None) -> str | None:
    """A section's own body as it reads now, or None when there is no such section (or no text)."""
    if markdown is None or not section_id:
        return None
    found = sections.find(markdown, section_id)
    return sections.body(markdown, found) if found is not None else None


@dataclass(frozen=True)
class Standing:
    """A topic or document as its summary reads it, from its row read once: as a PACT fabric (its active
    members), its title and version, and the approval policy its proposals follow."""

    fabric: sessions.Fabric
    title: str | None
    version: int | None
    approval: Approval


async def standing(session: AsyncSession, resource_type: str, resource_id: str) -> Standing:
    """The topic or document `resource_id` as a person's summary reads it (404 when there is none)."""
    key = canonical_id(resource_id)
    if key is not None and resource_type == ResourceType.TOPIC:
        topic = await session.get(Topic, key)
        if topic is not None:
            fabric = await topic_fabric(session, topic)
            return Standing(fabric, topic.title, topic.version, TopicResource(topic).approval)
    if key is not None and resource_type == ResourceType.DOCUMENT:
        doc = await session.get(Document, key)
        if doc is not None:
            fabric = await document_fabric(session, doc)
            return Standing(fabric, doc.title, doc.version, DocumentResource(doc).approval)
    raise NotFound(f"{resource_type} {resource_id!r} not found", code=f"{resource_type}_not_found")


async def _load(
    session: AsyncSession, resource_type: str, resource_id: str
) -> tuple[consensus.Resource, consensus.Policy]:
    if resource_type == "topic":
        topic = await session.get(Topic, resource_id)
        if topic is not None:
            return TopicResource(topic), TOPIC_POLICY
    elif resource_type == "document":
        doc = await session.get(Document, resource_id)
        if doc is not None:
            return DocumentResource(doc), DOCUMENT_POLICY
    raise NotFound(f"{resource_type} {resource_id} no longer exists", code="resource_not_found")


async def lock_proposal(session: AsyncSession, proposal: Proposal) -> tuple[consensus.Resource, Proposal]:
    """Lock the proposal's resource, then the proposal (the engine's order), and return both fresh."""
    resource, _policy = await _load(session, proposal.resource_type, proposal.resource_id)
    await resource.lock(session)
    locked = await consensus.get_proposal(session, resource, proposal.id, lock=True)
    return resource, locked


async def decide(
    session: AsyncSession, ctx: Context, proposal: Proposal, *, approve: bool
) -> tuple[Proposal, int | None]:
    """A person approves (merges) or rejects a pending or objected proposal through the consensus engine.
    Returns the proposal and the resource's version after the decision."""
    resource, policy = await _load(session, proposal.resource_type, proposal.resource_id)
    decided = await consensus.decide_paused(session, ctx, resource, policy, proposal.id, approve=approve)
    if isinstance(resource, TopicResource) and not approve:
        # A pending proposal held the topic's consensus back; a rejection may let it form.
        await topic_lifecycle.recompute(session, ctx, resource.topic.id)
    _markdown, version = await resource.read(session)
    return decided, version


async def resolved_event(
    session: AsyncSession,
    ctx: Context,
    resource_type: str,
    resource_id: str,
    *,
    section_id: str | None,
    data: dict[str, Any],
    correlation_id: str,
    in_response_to: str | None = None,
) -> int:
    """Tell the agents on the resource's stream; returns the event's sequence number."""
    return await events.append_numbered(
        session,
        events.stream_of(resource_type, resource_id),
        RESOLVED_EVENT,
        ctx,
        section_id=section_id,
        data=data,
        correlation_id=correlation_id,
        in_response_to=in_response_to,
    )
