"""The conformance vectors' proposal dialect, in the lab only (`concord pact lab`, never `concord serve`).

PACT's negotiation vector (extended/sessions/two-agent-negotiation-smoke) creates proposals as PACT's own
reference server takes them, which differs from PACT's schema (spec/v2.0/schemas/proposal-request.json) and
from Concord's document API in three ways: the caller names the proposal (`proposalId`, a correlation handle
later steps use), it may carry no text (`newContent` absent: a position to agree on, not an edit), and the
answer is 200 with `status: open`, `created` and `proposer`; and it declares done with no body, where PACT's
schema and the document API ask for a status. A POST …/proposals that names its `proposalId` is taken here in
that dialect:

- the caller is authenticated and scoped exactly as the document API's own route does (tap:write);
- the proposal is made by `proposals.propose_named` (domain/documents/proposals.py), the documents' own
  operation for a proposal its caller names: with the section's current text when it carries none, so
  merging it leaves the text as it is; a repeat of an id on the same document answers the proposal again
  (`created: false`); an id taken elsewhere is a 409.

A POST …/done without a body is a done signal with status `aligned` (the vector's agent accepts the
outcome). Any other request goes to the document API's route unchanged (docs/pact.md, "The conformance
lab")."""

from __future__ import annotations

import json
import re
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from domain.consensus import profiles
from domain.consensus.completions import CompletionStatus
from domain.consensus.models import Proposal
from domain.documents import completions, proposals
from domain.documents.agents import RESOURCE
from domain.kernel.clock import iso_z
from domain.kernel.errors import BadRequest
from web.docs.auth import caller, check_service
from web.docs.schemas import DocumentDone
from web.kernel.access import Service
from web.kernel.request import runtime
from web.kernel.routing import json_response

PROPOSALS = re.compile(r"^/api/pact/([^/]+)/proposals$")
DONE = re.compile(r"^/api/pact/([^/]+)/done$")
WRITE = Service("tap:write")
OPEN = "open"  # PACT's word for a proposal still taking votes (Concord's `pending`)


class VectorProposal(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    proposalId: str = Field(min_length=1, max_length=36, pattern=r"^[A-Za-z0-9_.:-]+$")
    sectionId: str = Field(min_length=1, max_length=256)
    summary: str = Field(min_length=1, max_length=2_000)
    newContent: str | None = Field(default=None, max_length=50_000)
    ttlSeconds: int | None = Field(default=None, ge=30, le=86_400)


class VectorProposalOut(BaseModel):
    proposalId: str
    sectionId: str
    summary: str
    status: str = Field(description="open while it takes votes, else Concord's status")
    created: bool
    proposer: str
    created_at: str


def _named(raw: bytes) -> dict[str, Any] | None:
    """The body, if it is a JSON object naming its proposalId (the vectors' dialect)."""
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    return body if isinstance(body, dict) and "proposalId" in body else None


async def _answer(session: Any, proposal: Proposal, *, created: bool) -> web.Response:
    proposer = await profiles.principal_of(session, RESOURCE, proposal.resource_id, proposal.author_id)
    # The lab's dialect answers before any operation, so it writes its model itself.
    return json_response(
        VectorProposalOut(
            proposalId=proposal.id,
            sectionId=proposal.section_id,
            summary=proposal.summary,
            status=OPEN if proposal.status == "pending" else proposal.status,
            created=created,
            proposer=proposer,
            created_at=iso_z(proposal.created_at),
        ).model_dump(mode="json")
    )


async def _create(request: web.Request, document_id: str, body: VectorProposal) -> web.Response:
    async with runtime(request).db.transaction() as session:
        proposal, created = await proposals.propose_named(
            session,
            caller(request),
            document_id,
            proposal_id=body.proposalId,
            section_id=body.sectionId,
            summary=body.summary,
            text=body.newContent,
            ttl_seconds=body.ttlSeconds,
        )
        return await _answer(session, proposal, created=created)


async def _done(request: web.Request, document_id: str) -> web.Response:
    """A done signal without a body: the vector's agent accepts the outcome (`aligned`)."""
    await check_service(request, WRITE)
    async with runtime(request).db.transaction() as session:
        signal = await completions.done(
            session, caller(request), document_id, status=CompletionStatus.ALIGNED, summary=None
        )
    return json_response(DocumentDone.of(signal).model_dump(mode="json"))


@web.middleware
async def vector_dialect(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Innermost: the app's error handling renders what this raises, as for its own routes."""
    done = DONE.match(request.path)
    if request.method == "POST" and done is not None and not (await request.read()).strip():
        return await _done(request, done.group(1))
    found = PROPOSALS.match(request.path)
    if request.method != "POST" or found is None:
        return await handler(request)
    raw = await request.read()  # kept by aiohttp: the route reads the same bytes if this passes it on
    named = _named(raw)
    if named is None:
        return await handler(request)
    await check_service(request, WRITE)
    try:
        body = VectorProposal.model_validate(named)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "body"
        raise BadRequest(f"{field}: {first['msg']}", field=field) from None
    return await _create(request, found.group(1), body)
