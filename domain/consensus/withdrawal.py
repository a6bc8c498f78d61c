"""An author withdraws its own pending proposal (PACT v2.0.3 §4.3 `proposal.withdraw`, §5 PENDING →
WITHDRAWN), on topics and documents alike, through the engine's `Resource` and `Policy`.

The proposal leaves the vote for good: status `withdrawn`, event `pact.proposal.withdrawn`. What it held is
released: the escalations its approval policy raised for a person's decision are closed (human-only), the
votes still owed on it are discharged (PACT §6.5 obligations), and the resource type's `on_withdrawn` hook
gives back what the type took for it (a topic's stake).

Concurrency: the same order as every proposal transition, resource row then proposal row, so a withdrawal
racing a vote (or a reviewer's decision, or the TTL sweep) has exactly one outcome: whichever locks first
decides, and the other finds the proposal no longer pending (409). The policy's escalations are locked before
the resource, the order a reviewer's answer takes them in (escalation, then resource).
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import escalations, obligations, proposal_events
from domain.consensus.engine import Policy, Resource, get_proposal, snapshot, stream_of
from domain.consensus.models import Proposal
from domain.kernel import audit, events
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.errors import Conflict, Forbidden
from domain.kernel.ids import canonical_ref

WITHDRAWN = "withdrawn"


async def withdraw(
    session: AsyncSession, ctx: Context, resource: Resource, policy: Policy, proposal_id: str
) -> Proposal:
    """Withdraw the acting agent's own pending proposal: 404 if the resource has no such proposal, 403
    `not_author` for anyone but its author, 409 `proposal_not_pending` once it is decided."""
    actor = ctx.require_actor()
    key = canonical_ref(proposal_id)
    if key:
        await escalations.lock_raised_for(session, resource.resource_type, resource.resource_id, key)
    await resource.lock(session)
    proposal = await get_proposal(session, resource, proposal_id, lock=True)
    if proposal.author_id != actor.id:
        raise Forbidden("only the proposal's author may withdraw it", code="not_author")
    if proposal.status != "pending":
        raise Conflict(
            f"proposal is {proposal.status}; only a pending proposal can be withdrawn",
            code="proposal_not_pending",
            proposalStatus=proposal.status,
        )
    before = snapshot(proposal)
    proposal.status = WITHDRAWN
    proposal.resolved_at = utcnow()
    events.append(
        session,
        stream_of(resource),
        "pact.proposal.withdrawn",
        ctx,
        section_id=proposal.section_id,
        correlation_id=proposal.id,
        data=proposal_events.closed(proposal),
    )
    await escalations.close_raised_for(
        session,
        ctx,
        resource_type=resource.resource_type,
        resource_id=resource.resource_id,
        proposal_ids=[proposal.id],
        reason=f"proposal {proposal.id} was withdrawn by its author: there is nothing left to decide",
    )
    await obligations.discharge_for_proposal(session, proposal.id, WITHDRAWN)
    await policy.on_withdrawn(session, ctx, proposal)
    audit.record(
        session, ctx, "proposal.withdraw", "proposal", proposal.id, before=before, after=snapshot(proposal)
    )
    return proposal
