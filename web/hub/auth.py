"""The hub's guards, one per credential it accepts (agent, commercial and staff keys), and the typed
accessors a handler reads its caller with. Each guard answers 401 (hub error body) for a missing,
invalid or other-kind key, 403 for a staff key without the declared role, and caches the principal on
the request so the key is looked up once."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from domain.agents import registry as agents
from domain.axiom import keys as axiom_keys
from domain.axiom.models import AxiomKey
from domain.kernel.context import Context
from domain.kernel.errors import Forbidden, Unauthorized
from domain.people import staff
from web.kernel.access import (
    ACCESS,
    CREDITS_REMAINING,
    Access,
    Agent,
    Commercial,
    Guard,
    Staff,
    StaffRole,
    principal,
)
from web.kernel.request import context, guard_session, presented_key, runtime


@dataclass(frozen=True)
class StaffMember:
    ctx: Context
    # The key's stored roles: Staff(role=...) admits only keys holding that role, Staff() any staff key.
    roles: frozenset[StaffRole]


AGENT = web.RequestKey("agent_context", Context)
COMMERCIAL = web.RequestKey("commercial_key", AxiomKey)
STAFF = web.RequestKey("staff_member", StaffMember)


async def check_agent(request: web.Request, access: Agent) -> None:
    key = presented_key(request, extra_headers=("x-source-agent-key",))
    if not key:
        raise Unauthorized("missing agent key: send 'Authorization: Bearer pact_sk_…'", code="unauthorized")
    async with guard_session(request) as session:
        actor = await agents.authenticate(session, key)
    if actor is None:
        raise Unauthorized("invalid agent key", code="unauthorized")
    if actor.scope is not None:
        confine_to_topic(request, actor.scope)
    request[AGENT] = context(request, actor)


def confine_to_topic(request: web.Request, topic_id: str) -> None:
    """An agent an invite registered (POST /api/pact/{topicId}/join-token) acts on its one topic's
    /api/pact/{topicId}/… paths and nothing else (403)."""
    asked = (request.match_info.get("topicId") or "").strip().lower()
    if not request.path.startswith("/api/pact/") or asked != topic_id:
        raise Forbidden(
            f"this key was issued by an invite to topic {topic_id} and works only on its "
            f"/api/pact/{topic_id}/… paths",
            code="key_scoped",
            topicId=topic_id,
        )


async def check_commercial(request: web.Request, access: Commercial) -> None:
    async with guard_session(request) as session:
        request[COMMERCIAL] = await axiom_keys.authenticate(session, presented_key(request))


async def check_staff(request: web.Request, access: Staff) -> None:
    async with guard_session(request) as session:
        found = await staff.authenticate(session, presented_key(request))
    member = request[STAFF] = StaffMember(context(request, found.actor), roles=found.roles)
    if access.role is not None and access.role not in member.roles:
        raise Forbidden(
            f"this endpoint needs a staff key with the role {access.role}",
            code="insufficient_role",
            requiredRole=access.role,
        )


GUARDS: dict[type[Access], Guard] = {Agent: check_agent, Commercial: check_commercial, Staff: check_staff}


def agent_context(request: web.Request) -> Context:
    """The Context of the agent whose key authenticated this request (routes declared Agent())."""
    return principal(request, AGENT)


def commercial_key(request: web.Request) -> AxiomKey:
    """The commercial key that authenticated this request (routes declared Commercial(...))."""
    return principal(request, COMMERCIAL)


def staff_context(request: web.Request) -> Context:
    """The Context of the staff member whose key authenticated this request (routes declared Staff())."""
    return principal(request, STAFF).ctx


def staff_roles(request: web.Request) -> frozenset[StaffRole]:
    """The roles of the staff key that authenticated this request (routes declared Staff())."""
    return principal(request, STAFF).roles


async def spend_credit(request: web.Request) -> int:
    """Charge a metered call one credit, once its input is valid (a bad query costs nothing): its own
    small write transaction, committed whatever happens next; 402 when none are left. Returns the
    credits remaining."""
    access = request.get(ACCESS)
    if not (isinstance(access, Commercial) and access.metered):
        raise RuntimeError(f"{request.method} {request.path} charges a credit but is not declared metered")
    async with runtime(request).db.transaction() as session:
        remaining = await axiom_keys.meter(session, commercial_key(request))
    request[CREDITS_REMAINING] = remaining
    return remaining
