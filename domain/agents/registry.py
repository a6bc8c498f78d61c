"""Agent registration and key authentication."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from domain.agents.models import Agent
from domain.kernel import audit, keys, ledger
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import Actor, Context
from domain.kernel.db import shared
from domain.kernel.errors import BadRequest, Conflict
from domain.kernel.ids import new_id

AGENT_KEY_PREFIX = "pact_sk_"
# Built once (every hub write runs it); the columns an actor is made of, no ORM instance to build.
_BY_KEY = select(Agent.id, Agent.name, Agent.key_hash, Agent.scope_topic_id).where(
    Agent.key_hash == bindparam("p_hash")
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# An agent's key, id and name never change once registered (the hub has no key rotation, revocation or
# renaming), so each process keeps the actors of the last keys it found: an agent's requests after its
# first look nothing up. Keys that match no agent are not kept (any string could be sent). A feature that
# changes or revokes a key must drop this cache in every process first.
_KNOWN = "agent_actors"
_KNOWN_KEPT = 10_000


@dataclass(frozen=True)
class Registered:
    """A new agent, its key (shown this once) and the balance it starts with."""

    agent: Agent
    api_key: str
    balance: int


def clean_name(name: str) -> str:
    name = _CONTROL.sub("", name).strip()
    if not name or not any(ch.isalnum() for ch in name):
        raise BadRequest("agentName must contain a letter or digit", code="invalid_field", field="agentName")
    return name


def name_key_of(name: str) -> str:
    """What two names must not share: case-folded after Unicode compatibility normalisation, so that
    'Alice', 'ALICE' and 'Ａｌｉｃｅ' are one name."""
    return unicodedata.normalize("NFKC", name).casefold()


async def register(
    session: AsyncSession,
    ctx: Context,
    *,
    agent_name: str,
    model: str | None,
    framework: str | None,
    description: str | None,
    starting_balance: int,
    scope_topic_id: str | None = None,
) -> Registered:
    """`scope_topic_id`: the agent is limited to that topic (an invite's join)."""
    name = clean_name(agent_name)
    name_key = name_key_of(name)
    api_key = keys.generate(AGENT_KEY_PREFIX)
    agent = Agent(
        id=new_id(),
        name=name,
        name_key=name_key,
        key_hash=keys.hash_key(api_key),
        model=model,
        framework=framework,
        description=description,
        created_at=utcnow(),
        scope_topic_id=scope_topic_id,
    )
    session.add(agent)
    try:
        await session.flush()
    except IntegrityError:  # the name is taken (the unique name key decides, even between racing requests)
        raise Conflict(f"an agent named {name!r} is already registered", code="agent_name_taken") from None
    wallet = await ledger.new_wallet(session, "agent", agent.id)
    if starting_balance > 0:
        await ledger.transfer(
            session, await ledger.system_wallet(session), wallet, starting_balance, "registration"
        )
    actor_ctx = Context(
        actor=Actor(agent.id, agent.name, agent.key_hash), request_id=ctx.request_id, country=ctx.country
    )
    audit.record(session, actor_ctx, "agent.register", "agent", agent.id, after=public(agent))
    return Registered(agent, api_key, starting_balance)


async def authenticate(session: AsyncSession, api_key: str) -> Actor | None:
    """The agent whose key this is, as the actor of a request (None for any other key)."""
    if not api_key.startswith(AGENT_KEY_PREFIX):
        return None
    key_hash = keys.hash_key(api_key)
    known: dict[str, Actor] = shared(session).setdefault(_KNOWN, {})
    actor = known.get(key_hash)
    if actor is not None:
        return actor
    row = (await session.execute(_BY_KEY, {"p_hash": key_hash})).first()
    if row is None:
        return None
    if len(known) >= _KNOWN_KEPT:
        del known[next(iter(known))]  # the longest kept
    actor = known[key_hash] = Actor(row.id, row.name, row.key_hash, scope=row.scope_topic_id)
    return actor


def public(agent: Agent) -> dict[str, Any]:
    # A stored format: the `agent.register` audit entry's `after` (its keys never change).
    return {
        "agentId": agent.id,
        "agentName": agent.name,
        "model": agent.model,
        "framework": agent.framework,
        "description": agent.description,
        "createdAt": iso(agent.created_at),
    }
