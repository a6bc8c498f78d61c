"""Invite tokens on a hub topic (PACT §4.1 `join-token`, Extended): the topic's owner (the agent that
created it) issues, lists and revokes them; anyone holding one registers an agent and joins the topic in one
step, without a key of their own.

Joining with a token registers a hub agent limited to that topic (`Agent.scope_topic_id`; web/hub/auth.py
refuses its key anywhere else) with a registration's starting balance, and joins it exactly as
`POST …/join` does (domain/topics/store.py), in the invite use's transaction: a refusal (a taken name)
leaves nothing behind and the use unspent. The invite primitive itself is domain/kernel/invites.py,
shared with documents."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from domain.agents import registry
from domain.kernel import audit, events, invites, keys
from domain.kernel.context import Actor, Context
from domain.kernel.errors import Forbidden, NotFound
from domain.kernel.ids import canonical_id
from domain.kernel.invites import InviteView, IssuedInvite, ResourceKind
from domain.topics import store, topic_events
from domain.topics.models import Topic


@dataclass(frozen=True)
class TopicTokenJoin:
    """A join made with an invite token: the new agent, its topic-scoped key, the join as `…/join` has it."""

    agent_id: str
    agent_name: str
    api_key: str
    joined: store.Joined


async def _owned(session: AsyncSession, ctx: Context, topic_id: str) -> Topic:
    topic = await store.get(session, topic_id)
    if topic.creator_id != ctx.require_actor().id:
        raise Forbidden(
            "only the topic's owner (the agent that created it) manages its invites", code="not_owner"
        )
    return topic


async def _record(
    session: AsyncSession, ctx: Context, topic: Topic, event: str, op: str, found: InviteView
) -> None:
    data = topic_events.invite(found)
    events.append(session, store.stream(topic.id), event, ctx, data=data, correlation_id=found.id)
    audit.record(session, ctx, op, "topic", topic.id, after=data)


async def issue(
    session: AsyncSession, ctx: Context, topic_id: str, *, ttl_seconds: int, max_uses: int, label: str | None
) -> IssuedInvite:
    topic = await _owned(session, ctx, topic_id)
    issued = await invites.issue(
        session,
        ResourceKind.TOPIC,
        topic.id,
        created_by=ctx.require_actor().id,
        ttl_seconds=ttl_seconds,
        max_uses=max_uses,
        label=label,
    )
    await _record(session, ctx, topic, "pact.invite.issued", "topic.invite.issue", issued.invite)
    return issued


async def listed(session: AsyncSession, ctx: Context, topic_id: str) -> list[InviteView]:
    topic = await _owned(session, ctx, topic_id)
    return await invites.listed(session, ResourceKind.TOPIC, topic.id)


async def revoke(session: AsyncSession, ctx: Context, topic_id: str, invite_id: str) -> InviteView:
    topic = await _owned(session, ctx, topic_id)
    done = await invites.revoke(session, ResourceKind.TOPIC, topic.id, invite_id)
    if done.changed:
        await _record(session, ctx, topic, "pact.invite.revoked", "topic.invite.revoke", done.invite)
    return done.invite


async def join_with_token(
    session: AsyncSession, ctx: Context, topic_id: str, *, agent_name: str, token: str, starting_balance: int
) -> TopicTokenJoin:
    """Takes a use of the token's invite to this topic, registers the scoped agent and joins it; every wrong
    token (and a topic that is gone) answers the same 403."""
    key = canonical_id(topic_id)
    if key is None:
        raise invites.invalid()
    await invites.redeem(session, ResourceKind.TOPIC, key, token)
    try:
        topic = await store.get(session, key)
    except NotFound:
        raise invites.invalid() from None
    made = await registry.register(
        session,
        ctx,
        agent_name=agent_name,
        model=None,
        framework=None,
        description=None,
        starting_balance=starting_balance,
        scope_topic_id=topic.id,
    )
    agent = made.agent
    actor = Actor(agent.id, agent.name, keys.hash_key(made.api_key), scope=topic.id)
    joined = await store.join(
        session, Context(actor=actor, request_id=ctx.request_id, country=ctx.country), topic.id
    )
    return TopicTokenJoin(agent.id, agent.name, made.api_key, joined)
