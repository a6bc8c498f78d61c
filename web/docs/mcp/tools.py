"""MCP tools: each one validates its arguments with a pydantic model (which also gives its JSON Schema),
checks the key's scope, and calls the same domain services as the REST handlers."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncSession

from domain.documents import agents as tap
from domain.documents import blobs, library, locks, proposals, records
from domain.documents.access import Caller
from domain.kernel.errors import BadRequest
from runtime.process import Runtime
from web.docs import schemas

Handler = Callable[[Runtime, Caller, Any], Awaitable[dict[str, Any]]]
A = TypeVar("A", bound=BaseModel)


class DocArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    documentId: str = Field(min_length=1, max_length=36, description="The document's id.")


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    args: type[BaseModel]
    scope: str
    handler: Handler
    writes: bool

    def schema(self) -> dict[str, Any]:
        schema = self.args.model_json_schema()
        schema.pop("title", None)
        return schema


TOOLS: dict[str, Tool] = {}


def tool(
    name: str, description: str, args: type[A], scope: str, *, writes: bool = False
) -> Callable[[Callable[[AsyncSession, Caller, A], Awaitable[dict[str, Any]]]], Handler]:
    """Register a tool whose handler runs in one unit of work (a transaction when it writes)."""

    def register(fn: Callable[[AsyncSession, Caller, A], Awaitable[dict[str, Any]]]) -> Handler:
        async def run(rt: Runtime, who: Caller, parsed: A) -> dict[str, Any]:
            unit = rt.db.transaction() if writes else rt.db.read()
            async with unit as session:
                return await fn(session, who, parsed)

        TOOLS[name] = Tool(name, description, args, scope, run, writes)
        return run

    return register


def _body(args: BaseModel) -> dict[str, Any]:
    return args.model_dump(exclude={"documentId"})


# ---- documents -------------------------------------------------------------------------------------


class ListArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tag: str | None = Field(default=None, max_length=64, description="Only documents with this tag.")
    page: int = Field(default=1, ge=1, le=100_000)
    pageSize: int = Field(default=20, ge=1, le=100)


@tool(
    "pact_list_documents",
    "List the documents of your organisation (newest first), optionally by tag.",
    ListArgs,
    "documents:read",
)
async def list_documents(session: AsyncSession, who: Caller, a: ListArgs) -> dict[str, Any]:
    return await library.list_documents(session, who, tag=a.tag, page=a.page, page_size=a.pageSize)


class UploadArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    filename: str = Field(min_length=1, max_length=255, description="Name with extension, e.g. brief.docx")
    contentBase64: str = Field(min_length=1, description="The file's bytes, base64-encoded.")
    title: str | None = Field(default=None, max_length=500)
    tags: list[str] = Field(default_factory=list, max_length=20)


async def upload(rt: Runtime, who: Caller, a: UploadArgs) -> dict[str, Any]:
    """Stage the decoded bytes, then the same domain path as the REST upload."""
    try:
        data = base64.b64decode(a.contentBase64, validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest("contentBase64 is not valid base64", field="contentBase64") from None
    writer = blobs.BlobWriter(rt.settings.blob_dir, rt.settings.max_upload_bytes)
    writer.write(data)
    writer.close()
    return await library.accept_upload(
        rt.db, who, writer, filename=a.filename, title=a.title, tags=a.tags, field="contentBase64"
    )


TOOLS["pact_upload_document"] = Tool(
    "pact_upload_document",
    "Upload a document (DOCX, PDF, Markdown, TXT or HTML) as base64. It converts in the background: poll "
    "pact_get_document until status is 'ready' before reading content or sections.",
    UploadArgs,
    "documents:write",
    upload,
    True,
)


@tool(
    "pact_get_document",
    "A document's metadata: title, status (processing, ready, failed), version, counts.",
    DocArgs,
    "documents:read",
)
async def get_document(session: AsyncSession, who: Caller, a: DocArgs) -> dict[str, Any]:
    return await library.metadata(session, who, a.documentId)


# ---- reading and membership -------------------------------------------------------------------------


@tool("pact_get", "The document's current Markdown content and version.", DocArgs, "tap:read")
async def get(session: AsyncSession, who: Caller, a: DocArgs) -> dict[str, Any]:
    return await tap.content(session, who, a.documentId)


@tool(
    "pact_sections",
    "The document's section tree: sectionId (use it in every section tool), title, level.",
    DocArgs,
    "tap:read",
)
async def sections(session: AsyncSession, who: Caller, a: DocArgs) -> dict[str, Any]:
    return await tap.section_tree(session, who, a.documentId)


# A tool's arguments are the REST body plus documentId, so both interfaces validate the same fields (no
# docstrings on these: pydantic would put them into the tool's JSON Schema).
class JoinArgs(DocArgs, schemas.JoinBody):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


@tool(
    "pact_join",
    "Join the document as an agent (role editor, reviewer or observer) before acting on it.",
    JoinArgs,
    "tap:write",
    writes=True,
)
async def join(session: AsyncSession, who: Caller, a: JoinArgs) -> dict[str, Any]:
    return await tap.join(session, who, a.documentId, _body(a))


@tool("pact_leave", "Leave the document; your section locks are released.", DocArgs, "tap:write", writes=True)
async def leave(session: AsyncSession, who: Caller, a: DocArgs) -> dict[str, Any]:
    return await tap.leave(session, who, a.documentId, None)


@tool("pact_agents", "The agents on the document with their roles.", DocArgs, "tap:read")
async def agents(session: AsyncSession, who: Caller, a: DocArgs) -> dict[str, Any]:
    return await tap.agents(session, who, a.documentId)


# ---- coordination ------------------------------------------------------------------------------------


class IntentArgs(DocArgs, schemas.IntentBody):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class ConstraintArgs(DocArgs, schemas.ConstraintBody):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class SalienceArgs(DocArgs, schemas.SalienceBody):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class SectionFilterArgs(DocArgs, schemas.SectionQuery):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


@tool(
    "pact_intent_declare",
    "Declare what you intend to change in a section and why.",
    IntentArgs,
    "tap:write",
    writes=True,
)
async def intent_declare(session: AsyncSession, who: Caller, a: IntentArgs) -> dict[str, Any]:
    intent = await records.declare_intent(
        session, who, a.documentId, section_id=a.sectionId, goal=a.goal, category=a.category
    )
    return schemas.IntentOut.of(intent).model_dump(mode="json")


@tool("pact_intents", "Declared intents, optionally of one section.", SectionFilterArgs, "tap:read")
async def intents(session: AsyncSession, who: Caller, a: SectionFilterArgs) -> dict[str, Any]:
    found = await records.list_intents(session, who, a.documentId, a.sectionId)
    return schemas.IntentList.of(found).model_dump(mode="json")


@tool(
    "pact_constraint_publish",
    "Publish a boundary for a section (type must, must_not, should, should_not, prefer).",
    ConstraintArgs,
    "tap:write",
    writes=True,
)
async def constraint_publish(session: AsyncSession, who: Caller, a: ConstraintArgs) -> dict[str, Any]:
    constraint = await records.publish_constraint(
        session, who, a.documentId, section_id=a.sectionId, boundary=a.boundary, type_=a.type
    )
    return schemas.ConstraintOut.of(constraint).model_dump(mode="json")


@tool("pact_constraints", "Published constraints, optionally of one section.", SectionFilterArgs, "tap:read")
async def constraints(session: AsyncSession, who: Caller, a: SectionFilterArgs) -> dict[str, Any]:
    found = await records.list_constraints(session, who, a.documentId, a.sectionId)
    return schemas.ConstraintList.of(found).model_dump(mode="json")


@tool(
    "pact_salience_set",
    "Score how much a section matters to you, 0 (not at all) to 10 (must review).",
    SalienceArgs,
    "tap:write",
    writes=True,
)
async def salience_set(session: AsyncSession, who: Caller, a: SalienceArgs) -> dict[str, Any]:
    score = await records.set_salience(session, who, a.documentId, section_id=a.sectionId, score=a.score)
    return schemas.SalienceOut.of(score).model_dump(mode="json")


@tool("pact_salience_map", "Salience of every section across agents, with the average.", DocArgs, "tap:read")
async def salience_map(session: AsyncSession, who: Caller, a: DocArgs) -> dict[str, Any]:
    found = await records.salience_map(session, who, a.documentId)
    return schemas.SalienceMap.of(found).model_dump(mode="json")


class LockArgs(DocArgs):
    sectionId: str = Field(min_length=1, max_length=256)
    ttlSeconds: int = Field(default=300, ge=1, le=3600, description="Lock lifetime (default 300 s).")


class SectionArgs(DocArgs):
    sectionId: str = Field(min_length=1, max_length=256)


@tool(
    "pact_lock",
    "Lock a section while you edit it; others' proposals on it are refused until it expires.",
    LockArgs,
    "tap:write",
    writes=True,
)
async def lock(session: AsyncSession, who: Caller, a: LockArgs) -> dict[str, Any]:
    return await locks.lock_section(session, who, a.documentId, a.sectionId, a.ttlSeconds)


@tool("pact_unlock", "Release your lock on a section.", SectionArgs, "tap:write", writes=True)
async def unlock(session: AsyncSession, who: Caller, a: SectionArgs) -> dict[str, Any]:
    return await locks.unlock_section(session, who, a.documentId, a.sectionId)


class EscalateArgs(DocArgs, schemas.EscalateBody):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


@tool(
    "pact_escalate",
    "Ask the human reviewers a question (about a section or a proposal).",
    EscalateArgs,
    "tap:write",
    writes=True,
)
async def escalate(session: AsyncSession, who: Caller, a: EscalateArgs) -> dict[str, Any]:
    return await tap.escalate(session, who, a.documentId, _body(a))


class PollArgs(DocArgs, schemas.PollQuery):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


@tool(
    "pact_poll",
    "Changes on the document since your last cursor (start without one); returns the next cursor.",
    PollArgs,
    "tap:read",
)
async def poll(session: AsyncSession, who: Caller, a: PollArgs) -> dict[str, Any]:
    return await tap.poll(session, who, a.documentId, since=a.since, section_id=a.sectionId, limit=a.limit)


# ---- proposals (the shared consensus engine with the document policy) -------------------------------


class ProposeArgs(DocArgs, schemas.ProposalBody):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class ProposalFilterArgs(DocArgs, schemas.ProposalQuery):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class VoteArgs(DocArgs):
    proposalId: str = Field(min_length=1, max_length=36)
    reason: str | None = Field(default=None, max_length=1000)


class RejectArgs(VoteArgs):
    reason: str = Field(min_length=1, max_length=1000, description="Why (required).")


@tool(
    "pact_propose",
    "Propose new content for one section; editors and reviewers vote on it.",
    ProposeArgs,
    "tap:write",
    writes=True,
)
async def propose(session: AsyncSession, who: Caller, a: ProposeArgs) -> dict[str, Any]:
    return await proposals.propose(session, who, a.documentId, _body(a))


@tool(
    "pact_proposals",
    "Proposals on the document with vote counts, optionally by section and status.",
    ProposalFilterArgs,
    "tap:read",
)
async def list_proposals(session: AsyncSession, who: Caller, a: ProposalFilterArgs) -> dict[str, Any]:
    return await proposals.list_proposals(session, who, a.documentId, section_id=a.sectionId, status=a.status)


@tool("pact_approve", "Approve a proposal (not your own).", VoteArgs, "tap:write", writes=True)
async def approve(session: AsyncSession, who: Caller, a: VoteArgs) -> dict[str, Any]:
    return await proposals.vote(session, who, a.documentId, a.proposalId, "approve", a.reason)


@tool("pact_reject", "Reject a proposal, giving the reason.", RejectArgs, "tap:write", writes=True)
async def reject(session: AsyncSession, who: Caller, a: RejectArgs) -> dict[str, Any]:
    return await proposals.vote(session, who, a.documentId, a.proposalId, "reject", a.reason)


@tool(
    "pact_object",
    "Object to a proposal: it pauses for a human reviewer to decide.",
    VoteArgs,
    "tap:write",
    writes=True,
)
async def object_(session: AsyncSession, who: Caller, a: VoteArgs) -> dict[str, Any]:
    return await proposals.vote(session, who, a.documentId, a.proposalId, "object", a.reason)
