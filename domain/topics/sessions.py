"""Session awareness on a hub topic (PACT v2.0.3 §4.4): `_status`, `manifest`, `_heartbeat`, `mark-read`
and `_onboard`, through the shared implementation (domain/consensus/sessions.py). The topic's members are
its participants; each hub agent registered on its own, so each is its own organisation: every counterparty
is cross-org and comes reduced in a manifest (§17.13). A rejected topic is closed; one in consensus or
stable has converged unless something is pending."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import records, sessions
from domain.kernel import audit
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.errors import Conflict, Forbidden
from domain.kernel.event_record import cursor_of
from domain.kernel.ids import new_id
from domain.kernel.settings import get_settings
from domain.topics import store as topics
from domain.topics import topic_events
from domain.topics.consensus import TopicResource
from domain.topics.fabric import fabric_of
from domain.topics.records import DEFAULT_CATEGORY, VOCABULARY


def _timeout() -> int:
    return get_settings().pact_heartbeat_timeout_seconds


async def _loaded(session: AsyncSession, topic_id: str) -> sessions.Fabric:
    return await fabric_of(session, await topics.get(session, topic_id))


async def status(session: AsyncSession, ctx: Context, topic_id: str, include: str | None) -> sessions.Status:
    parts = sessions.parse_include(include)
    fabric = await _loaded(session, topic_id)
    return await sessions.status(session, fabric, ctx.require_actor().id, parts, _timeout())


async def manifest(session: AsyncSession, ctx: Context, topic_id: str) -> sessions.Manifest:
    fabric = await _loaded(session, topic_id)
    actor = ctx.require_actor()
    if all(m.id != actor.id for m in fabric.members):
        # §17.13: a non-member gets 403 auth.forbidden from /manifest, never a partial manifest.
        raise Forbidden(
            "join the topic first (POST /api/pact/{topicId}/join or …/_onboard)", code="auth.forbidden"
        )
    return await sessions.manifest(session, fabric, actor.id, _timeout())


async def heartbeat(
    session: AsyncSession,
    ctx: Context,
    topic_id: str,
    *,
    client_heartbeat_id: str,
    attention_required: bool,
    observed_event_id: str | None,
) -> sessions.Heartbeat:
    fabric = await _loaded(session, topic_id)
    return await sessions.heartbeat(
        session,
        ctx,
        fabric,
        ctx.require_actor().id,
        client_heartbeat_id=client_heartbeat_id,
        attention_required=attention_required,
        observed_event_id=observed_event_id,
        timeout=_timeout(),
    )


async def mark_read(
    session: AsyncSession,
    ctx: Context,
    topic_id: str,
    *,
    from_event_id: str | None,
    to_event_id: str | None,
    from_seq: int | None,
    to_seq: int | None,
) -> sessions.MarkRead:
    fabric = await _loaded(session, topic_id)
    return await sessions.mark_read(
        session,
        ctx,
        fabric,
        ctx.require_actor().id,
        from_event_id=from_event_id,
        to_event_id=to_event_id,
        from_seq=from_seq,
        to_seq=to_seq,
    )


async def onboard(
    session: AsyncSession,
    ctx: Context,
    topic_id: str,
    drafts: Sequence[sessions.ConstraintDraft],
    *,
    pact_role: sessions.PactRole | None = None,
    contact: Mapping[str, str] | None = None,
) -> sessions.Onboarded[topics.Joined]:
    """Join the topic and publish constraints in one transaction (§4.4.5): every check first, then the
    participation, one `pact.fabric.onboarded` event (no `pact.agent.joined`) and the constraints, whose
    events carry its id as their correlationId. A refusal writes nothing."""
    actor = ctx.require_actor()
    topic = await topics.get_locked(session, topic_id)
    if await topics.is_participant(session, topic.id, actor.id):
        raise Conflict(
            "you have already joined this topic; publish more constraints with POST …/constraints",
            code="agent.already_joined",
        )
    sessions.check_constraints(topic.content, drafts, may_publish=True, role="collaborator")
    row, joined = await topics.admit(session, ctx, topic)
    if not joined:  # a racing onboarding of the same agent joined first
        raise Conflict("you have already joined this topic", code="agent.already_joined")
    resource = TopicResource(topic, locked=True)
    fabric = await fabric_of(session, topic)
    ids = [new_id() for _ in drafts]
    registration = topic_events.registration(topic, actor.id, actor.name, row.role, row.joined_at, not joined)
    joined_as = topics.Joined(topic, actor.id, actor.name, row, already_joined=not joined)
    # A hub agent is its own principal (it registered itself; no operator attests a DID for it).
    principal = await sessions.enrol(
        session, fabric, actor.id, principal=None, pact_role=pact_role, contact=contact
    )
    seq = await sessions.record_onboarded(
        session,
        ctx,
        fabric,
        registration=registration,
        member_id=actor.id,
        role=pact_role or row.role,
        constraint_ids=ids,
        principal=principal,
    )
    published = [
        await records.publish_constraint(
            session,
            ctx,
            resource,
            VOCABULARY,
            section_id=draft.section_id,
            boundary=draft.boundary,
            kind=draft.category or DEFAULT_CATEGORY,
            constraint_id=cid,
            correlation_id=cursor_of(seq),
        )
        for cid, draft in zip(ids, drafts, strict=True)
    ]
    audit.record(
        session, ctx, "topic.onboard", "topic", topic.id, after=topic_events.onboarded(actor.id, ids)
    )
    return sessions.Onboarded(topic.id, joined_as, pact_role or row.role, published, seq, utcnow())
