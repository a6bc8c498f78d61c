"""Invite tokens on a document (PACT §4.1 `join-token`, Extended): the owning organisation issues, lists and
revokes them (a key with documents:write of the document's organisation), and an agent without any account
joins with one.

Joining with a token mints a service key of the document's organisation limited to that one document
(`ServiceKey.document_id`; web/docs/auth.py refuses it anywhere else) with the agent scopes tap:read and
tap:write and the comment scopes, and joins it as an agent exactly as `POST …/join` does
(domain/documents/agents.py), in the same transaction as the invite's use: any refusal (a taken name) leaves
no key, no agent and the use unspent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from domain.documents import agents, library
from domain.documents.access import Caller
from domain.documents.models import Document, DocumentAgent, ServiceKey
from domain.documents.servicekeys import PREFIX, actor_of
from domain.kernel import audit, events, invites, keys
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.ids import new_id
from domain.kernel.invites import InviteView, IssuedInvite, ResourceKind

# What a key minted by an invite may do: act as an agent on its one document, comments on its PACT path
# included (PACT's comment.add is a Core operation); the confinement keeps it off /api/comments.
SCOPED_KEY_SCOPES = ["comments:read", "comments:write", "tap:read", "tap:write"]
DEFAULT_ROLE = "editor"


@dataclass(frozen=True)
class TokenJoin:
    """A join made with an invite token: the agent `POST …/join` answers, and its scoped key."""

    agent: DocumentAgent
    api_key: str
    document_id: str
    invite_id: str


def _invite_data(found: InviteView) -> dict[str, Any]:
    """Stored format: the data of pact.invite.issued / .revoked and their audit entries (hashed into the
    chain: its keys never change)."""
    return {
        "inviteId": found.id,
        "role": found.role,
        "maxUses": found.max_uses,
        "expiresAt": found.expires_at.isoformat(),
    }


async def issue(
    session: AsyncSession,
    caller: Caller,
    document_id: str,
    *,
    ttl_seconds: int,
    max_uses: int,
    role: str,
    label: str | None,
) -> IssuedInvite:
    doc = await library.get(session, caller, document_id, for_update=True)
    issued = await invites.issue(
        session,
        ResourceKind.DOCUMENT,
        doc.id,
        created_by=caller.key_id,
        ttl_seconds=ttl_seconds,
        max_uses=max_uses,
        role=role,
        label=label,
    )
    await _record(session, caller.ctx, doc, "pact.invite.issued", "document.invite.issue", issued.invite)
    return issued


async def listed(session: AsyncSession, caller: Caller, document_id: str) -> list[InviteView]:
    doc = await library.get(session, caller, document_id)
    return await invites.listed(session, ResourceKind.DOCUMENT, doc.id)


async def revoke(session: AsyncSession, caller: Caller, document_id: str, invite_id: str) -> InviteView:
    doc = await library.get(session, caller, document_id, for_update=True)
    done = await invites.revoke(session, ResourceKind.DOCUMENT, doc.id, invite_id)
    if done.changed:
        await _record(session, caller.ctx, doc, "pact.invite.revoked", "document.invite.revoke", done.invite)
    return done.invite


async def _record(
    session: AsyncSession, ctx: Context, doc: Document, event: str, op: str, found: InviteView
) -> None:
    data = _invite_data(found)
    events.append(session, library.stream(doc.id), event, ctx, data=data, correlation_id=found.id)
    audit.record(session, ctx, op, "document", doc.id, after=data)


async def join_with_token(
    session: AsyncSession, ctx: Context, document_id: str, *, agent_name: str, token: str
) -> TokenJoin:
    """Takes a use of the token's invite to this document, mints the scoped key and joins it as an agent;
    every wrong token (and a document that is gone) answers the same 403."""
    redeemed = await invites.redeem(session, ResourceKind.DOCUMENT, document_id, token)
    doc = await session.get(Document, document_id)
    if doc is None:
        raise invites.invalid()
    secret = keys.generate(PREFIX)
    key = ServiceKey(
        id=new_id(),
        org_id=doc.org_id,
        name=f"invite {redeemed.invite_id[:8]}: {' '.join(agent_name.split())}"[:200],
        key_hash=keys.hash_key(secret),
        key_prefix=secret[:12],
        scopes=list(SCOPED_KEY_SCOPES),
        created_at=utcnow(),
        document_id=doc.id,
    )
    session.add(key)
    await session.flush()
    caller = Caller(
        ctx=Context(actor=actor_of(key), request_id=ctx.request_id, country=ctx.country),
        org_id=doc.org_id,
        key_id=key.id,
        name=key.name,
    )
    asked = agents.JoinRequest(agent_name, role=redeemed.role or DEFAULT_ROLE, invite_token=token)
    joined = await agents.join(session, caller, doc.id, asked)
    return TokenJoin(agent=joined, api_key=secret, document_id=doc.id, invite_id=redeemed.invite_id)
