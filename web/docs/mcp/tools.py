"""MCP tools: each one validates its arguments with a pydantic model (which also gives its input schema,
tool_schemas.py), answers what its REST counterpart does (whose model is its output schema), says what a call
does (`Effect`, the MCP annotations), checks the key's scope, and calls the same domain services as the REST
handlers."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Self, TypeVar

import mcp_types as mt
from pydantic import BaseModel, ConfigDict, Field, model_validator
from sqlalchemy.ext.asyncio import AsyncSession

from domain.consensus import escalations
from domain.consensus.escalations import EscalationKind
from domain.consensus.policies import Approval, ApprovalPolicy
from domain.consensus.records import ConstraintType, ConstraintTypeField
from domain.consensus.sessions import ConstraintDraft
from domain.documents import agents as tap
from domain.documents import blobs, completions, library, locks, proposals, records
from domain.documents import human as people
from domain.documents import sessions as doc_sessions
from domain.documents.access import Caller
from domain.kernel.errors import BadRequest
from runtime.process import Runtime
from web.docs import schemas
from web.docs.agents.sessions import DocumentOnboarded
from web.docs.mcp import tool_schemas
from web.kernel import completions as completions_wire
from web.kernel import events as events_wire
from web.kernel import human as human_wire
from web.kernel import locks as wire_locks
from web.kernel import sessions_wire
from web.kernel.collaboration import IntentObjectionBody

Handler = Callable[[Runtime, Caller, Any], Awaitable[dict[str, Any]]]
A = TypeVar("A", bound=BaseModel)


class Effect(StrEnum):
    """What a call does to Concord, which the MCP annotations state (docs/mcp.md has each tool's)."""

    READS = "reads"  # changes nothing
    ADDS = "adds"  # adds a record on every call; nothing already there changes
    CLAIMS = "claims"  # adds or renews the caller's own membership or lock; a repeat adds nothing
    REPLACES = "replaces"  # may end, replace or close what others see; a repeat changes nothing more

    def hints(self) -> dict[str, bool]:
        return {
            "read_only_hint": self is Effect.READS,
            "destructive_hint": self is Effect.REPLACES,
            "idempotent_hint": self is not Effect.ADDS,
        }


class DocArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    documentId: str = Field(min_length=1, max_length=36)


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    args: type[BaseModel]
    output: type[BaseModel]  # the REST answer's model: the result's structuredContent follows its schema
    scope: str
    handler: Handler
    effect: Effect
    open_world: bool = False  # True when a call reaches beyond Concord (people, other systems)
    params: Mapping[str, str] = field(default_factory=dict)  # this tool's own words for some arguments

    @property
    def writes(self) -> bool:
        return self.effect is not Effect.READS

    def schema(self) -> dict[str, Any]:
        return tool_schemas.input_schema(self.args, self.params)

    def output_schema(self) -> dict[str, Any]:
        return tool_schemas.output_schema(self.output)

    def annotations(self) -> mt.ToolAnnotations:
        return mt.ToolAnnotations(title=self.title, open_world_hint=self.open_world, **self.effect.hints())


TOOLS: dict[str, Tool] = {}


def tool(
    name: str,
    title: str,
    description: str,
    args: type[A],
    output: type[BaseModel],
    scope: str,
    effect: Effect,
    *,
    open_world: bool = False,
    params: Mapping[str, str] | None = None,
) -> Callable[[Callable[[AsyncSession, Caller, A], Awaitable[dict[str, Any]]]], Handler]:
    """Register a tool whose handler runs in one unit of work (a transaction when it writes)."""

    def register(fn: Callable[[AsyncSession, Caller, A], Awaitable[dict[str, Any]]]) -> Handler:
        async def run(rt: Runtime, who: Caller, parsed: A) -> dict[str, Any]:
            unit = rt.db.read() if effect is Effect.READS else rt.db.transaction()
            async with unit as session:
                return await fn(session, who, parsed)

        TOOLS[name] = Tool(
            name, title, description, args, output, scope, run, effect, open_world, params or {}
        )
        return run

    return register


# ---- documents -------------------------------------------------------------------------------------


class ListArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tag: str | None = Field(default=None, max_length=64)
    page: int = Field(default=1, ge=1, le=100_000)
    pageSize: int = Field(default=20, ge=1, le=100)


@tool(
    "pact_list_documents",
    "List documents",
    "List the documents of your organisation, newest first, 20 a page by default, optionally by tag: id, "
    "title, status (processing, ready, failed) and version of each.",
    ListArgs,
    schemas.DocumentList,
    "documents:read",
    Effect.READS,
)
async def list_documents(session: AsyncSession, who: Caller, a: ListArgs) -> dict[str, Any]:
    found = await library.list_documents(session, who, tag=a.tag, page=a.page, page_size=a.pageSize)
    return schemas.DocumentList.answer(found)


class UploadArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    filename: str = Field(min_length=1, max_length=255)
    contentBase64: str = Field(min_length=1)
    title: str | None = Field(default=None, max_length=500)
    tags: list[str] = Field(default_factory=list, max_length=20)
    approvalPolicy: ApprovalPolicy = ApprovalPolicy.CONCORD_DEFAULT
    allowSelfApproval: bool = False


async def upload(rt: Runtime, who: Caller, a: UploadArgs) -> dict[str, Any]:
    """Stage the decoded bytes, then the same domain path as the REST upload."""
    try:
        data = base64.b64decode(a.contentBase64, validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest("contentBase64 is not valid base64", field="contentBase64") from None
    writer = blobs.BlobWriter(rt.settings.blob_dir, rt.settings.max_upload_bytes)
    writer.write(data)
    writer.close()
    doc = await library.accept_upload(
        rt.db,
        who,
        writer,
        filename=a.filename,
        title=a.title,
        tags=a.tags,
        field="contentBase64",
        approval=Approval(a.approvalPolicy, a.allowSelfApproval),
    )
    return schemas.DocumentSummary.answer(doc)


TOOLS["pact_upload_document"] = Tool(
    "pact_upload_document",
    "Upload a document",
    "Upload a document (DOCX, PDF, Markdown, plain text or HTML): its bytes base64-encoded in contentBase64, "
    "its name in filename. It converts in the background: poll pact_get_document until status is 'ready' "
    "before reading content or sections. Every call adds a new document.",
    UploadArgs,
    schemas.DocumentSummary,
    "documents:write",
    upload,
    Effect.ADDS,
)


@tool(
    "pact_get_document",
    "Get a document's metadata",
    "A document's metadata: title, status (processing, ready, failed), version, counts.",
    DocArgs,
    schemas.DocumentMetadata,
    "documents:read",
    Effect.READS,
)
async def get_document(session: AsyncSession, who: Caller, a: DocArgs) -> dict[str, Any]:
    return schemas.DocumentMetadata.of_metadata(await library.metadata(session, who, a.documentId))


# ---- reading and membership -------------------------------------------------------------------------


@tool(
    "pact_get",
    "Read a document",
    "The document's current Markdown content and version.",
    DocArgs,
    schemas.DocumentContent,
    "tap:read",
    Effect.READS,
)
async def get(session: AsyncSession, who: Caller, a: DocArgs) -> dict[str, Any]:
    return schemas.DocumentContent.answer(await tap.content(session, who, a.documentId))


@tool(
    "pact_sections",
    "List a document's sections",
    "The document's section tree: sectionId (use it in every section tool), title, level, children.",
    DocArgs,
    schemas.DocumentSections,
    "tap:read",
    Effect.READS,
)
async def sections(session: AsyncSession, who: Caller, a: DocArgs) -> dict[str, Any]:
    return schemas.DocumentSections.answer(await tap.section_tree(session, who, a.documentId))


# A tool's arguments are the REST body plus documentId, so both interfaces validate the same fields (no
# docstrings on these: pydantic would put them into the tool's JSON Schema).
class JoinArgs(DocArgs, schemas.JoinBody):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


@tool(
    "pact_join",
    "Join a document",
    "Join the document as an agent (role editor, reviewer or observer) before acting on it. Joining twice "
    "is refused: leave first.",
    JoinArgs,
    schemas.Joined,
    "tap:write",
    Effect.CLAIMS,
)
async def join(session: AsyncSession, who: Caller, a: JoinArgs) -> dict[str, Any]:
    agent = await tap.join(session, who, a.documentId, a.request())
    return schemas.Joined.of(agent).model_dump(mode="json")


@tool(
    "pact_leave",
    "Leave a document",
    "Leave the document: your membership ends and your section locks are released.",
    DocArgs,
    schemas.Left,
    "tap:write",
    Effect.REPLACES,
)
async def leave(session: AsyncSession, who: Caller, a: DocArgs) -> dict[str, Any]:
    return schemas.Left.of(await tap.leave(session, who, a.documentId, None)).model_dump(mode="json")


@tool(
    "pact_agents",
    "List a document's agents",
    "The agents on the document with their roles and capabilities.",
    DocArgs,
    schemas.DocumentAgents,
    "tap:read",
    Effect.READS,
)
async def agents(session: AsyncSession, who: Caller, a: DocArgs) -> dict[str, Any]:
    found = await tap.agents(session, who, a.documentId)
    return schemas.DocumentAgents.of(found).model_dump(mode="json")


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
    "Declare an intent",
    "Declare what you intend to change in a section and why, so the other agents know before you propose. "
    "Every call adds an intent.",
    IntentArgs,
    schemas.IntentOut,
    "tap:write",
    Effect.ADDS,
)
async def intent_declare(session: AsyncSession, who: Caller, a: IntentArgs) -> dict[str, Any]:
    intent = await records.declare_intent(
        session, who, a.documentId, section_id=a.sectionId, goal=a.goal, category=a.category
    )
    return schemas.IntentOut.of(intent).model_dump(mode="json")


@tool(
    "pact_intents",
    "List intents",
    "The intents the agents declared, optionally of one section, each with its status (proposed, accepted "
    "once its TTL passed with no objection, objected, superseded by its author's next one) and objections.",
    SectionFilterArgs,
    schemas.IntentList,
    "tap:read",
    Effect.READS,
    params={"sectionId": "Only the intents on this section (as pact_sections gives it); omitted: all."},
)
async def intents(session: AsyncSession, who: Caller, a: SectionFilterArgs) -> dict[str, Any]:
    found = await records.list_intents(session, who, a.documentId, a.sectionId)
    return schemas.IntentList.of(found).model_dump(mode="json")


class IntentObjectArgs(DocArgs, IntentObjectionBody):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    intentId: str = Field(min_length=1, max_length=36)


@tool(
    "pact_intent_object",
    "Object to an intent",
    "Object to another agent's intent (not your own) while it is proposed, giving the reason: it becomes "
    "objected, and its author revises it with a new intent. An intent nobody objects to within its TTL "
    "(60 s by default) is accepted and takes no more objections. One objection per agent.",
    IntentObjectArgs,
    schemas.IntentOut,
    "tap:write",
    Effect.REPLACES,
    params={"reason": "Why its goal should not be pursued, for its author and the other agents (required)."},
)
async def intent_object(session: AsyncSession, who: Caller, a: IntentObjectArgs) -> dict[str, Any]:
    intent = await records.object_to_intent(session, who, a.documentId, a.intentId, reason=a.reason)
    return schemas.IntentOut.of(intent).model_dump(mode="json")


@tool(
    "pact_constraint_publish",
    "Publish a constraint",
    "Publish a boundary that proposals on a section should keep (type must, must_not, should, should_not, "
    "prefer). Every call adds a constraint.",
    ConstraintArgs,
    schemas.ConstraintOut,
    "tap:write",
    Effect.ADDS,
)
async def constraint_publish(session: AsyncSession, who: Caller, a: ConstraintArgs) -> dict[str, Any]:
    constraint = await records.publish_constraint(
        session, who, a.documentId, section_id=a.sectionId, boundary=a.boundary, type_=a.type
    )
    return schemas.ConstraintOut.of(constraint).model_dump(mode="json")


@tool(
    "pact_constraints",
    "List constraints",
    "The constraints the agents published, optionally of one section.",
    SectionFilterArgs,
    schemas.ConstraintList,
    "tap:read",
    Effect.READS,
    params={"sectionId": "Only the constraints on this section (as pact_sections gives it); omitted: all."},
)
async def constraints(session: AsyncSession, who: Caller, a: SectionFilterArgs) -> dict[str, Any]:
    found = await records.list_constraints(session, who, a.documentId, a.sectionId)
    return schemas.ConstraintList.of(found).model_dump(mode="json")


@tool(
    "pact_salience_set",
    "Score a section's salience",
    "Score how much a section matters to you, 0 (not at all) to 10 (must review); replaces your earlier "
    "score of that section.",
    SalienceArgs,
    schemas.SalienceOut,
    "tap:write",
    Effect.REPLACES,
)
async def salience_set(session: AsyncSession, who: Caller, a: SalienceArgs) -> dict[str, Any]:
    score = await records.set_salience(session, who, a.documentId, section_id=a.sectionId, score=a.score)
    return schemas.SalienceOut.of(score).model_dump(mode="json")


@tool(
    "pact_salience_map",
    "Map section salience",
    "Salience of every section across agents, with the average.",
    DocArgs,
    schemas.SalienceMap,
    "tap:read",
    Effect.READS,
)
async def salience_map(session: AsyncSession, who: Caller, a: DocArgs) -> dict[str, Any]:
    found = await records.salience_map(session, who, a.documentId)
    return schemas.SalienceMap.of(found).model_dump(mode="json")


class LockArgs(DocArgs):
    sectionId: str = Field(min_length=1, max_length=256)
    ttlSeconds: int = Field(default=300, ge=1, le=3600)


class SectionArgs(DocArgs):
    sectionId: str = Field(min_length=1, max_length=256)


@tool(
    "pact_lock",
    "Lock a section",
    "Lock a section while you edit it: others' proposals on it are refused until you unlock it or the lock "
    "expires, ttlSeconds after (default 300 s, at most 3600). Locking your locked section again renews it.",
    LockArgs,
    wire_locks.Lock,
    "tap:write",
    Effect.CLAIMS,
)
async def lock(session: AsyncSession, who: Caller, a: LockArgs) -> dict[str, Any]:
    lock = await locks.lock_section(session, who, a.documentId, a.sectionId, a.ttlSeconds)
    return wire_locks.Lock.of(lock).model_dump(mode="json")


@tool(
    "pact_unlock",
    "Unlock a section",
    "Release your lock on a section (only the holder can).",
    SectionArgs,
    wire_locks.Unlocked,
    "tap:write",
    Effect.REPLACES,
)
async def unlock(session: AsyncSession, who: Caller, a: SectionArgs) -> dict[str, Any]:
    released = await locks.unlock_section(session, who, a.documentId, a.sectionId)
    return wire_locks.Unlocked.of(released).model_dump(mode="json")


class EscalateArgs(DocArgs, schemas.EscalateBody):
    # No json_schema_extra: the REST body states "question or message" as a top-level oneOf, which
    # Anthropic's API refuses in a tool's input schema (and with it the whole tool list); the rule is checked
    # below instead, with the domain's own words.
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, json_schema_extra=None)

    @model_validator(mode="after")
    def _one_text(self) -> Self:
        try:
            escalations.question_of(self.question, self.message)
        except BadRequest as exc:
            raise ValueError(exc.detail) from None
        return self


@tool(
    "pact_escalate",
    "Escalate to a human",
    "Ask the human reviewers a question, about a section or a proposal if given: the text goes in question "
    "(or message, its other name; one of them is required). It reaches the reviewers' queue and, when "
    "one is configured, their webhook outside Concord. Every call adds an escalation.",
    EscalateArgs,
    schemas.Escalation,
    "tap:write",
    Effect.ADDS,
    open_world=True,
    params={
        "sectionId": "The section the question is about, if any (as pact_sections gives it).",
        "proposalId": "The proposal the question is about, if any.",
    },
)
async def escalate(session: AsyncSession, who: Caller, a: EscalateArgs) -> dict[str, Any]:
    raised = await tap.escalate(
        session,
        who,
        a.documentId,
        question=a.question,
        message=a.message,
        section_id=a.sectionId,
        proposal_id=a.proposalId,
        priority=a.priority,
    )
    return schemas.Escalation.answer(raised)


class AskHumanArgs(DocArgs, human_wire.AskHumanBody):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


@tool(
    "pact_ask_human",
    "Ask a person",
    "Ask the document's people a question that needs human judgement, and wait for the answer: it reaches "
    "the reviewers' queue (and their webhook, when one is configured); read the answer with "
    "pact_human_responses. Unanswered after timeoutSeconds (default 60 s), the question is timed-out. "
    "Join the document first. Every call adds a question.",
    AskHumanArgs,
    human_wire.HumanQuery,
    "tap:write",
    Effect.ADDS,
    open_world=True,
    params={
        "question": "The question for a person: what you need decided or confirmed.",
        "sectionId": "The section the question is about, if any (as pact_sections gives it).",
    },
)
async def ask_human(session: AsyncSession, who: Caller, a: AskHumanArgs) -> dict[str, Any]:
    found = await people.ask(
        session,
        who,
        a.documentId,
        question=a.question,
        section_id=a.sectionId or None,
        context=a.context or None,
        timeout_seconds=a.timeoutSeconds,
    )
    return human_wire.HumanQuery.of(found).model_dump(mode="json")


class HumanResponsesArgs(DocArgs, human_wire.HumanQueriesQuery):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


@tool(
    "pact_human_responses",
    "Read answers from people",
    "Your questions to the document's people (pact_ask_human), newest first, each with its status (pending, "
    "answered, timed-out) and, once answered, the person's answer.",
    HumanResponsesArgs,
    human_wire.HumanQueryList,
    "tap:read",
    Effect.READS,
    params={
        "status": "Only questions of this status: pending, answered or timed-out; omitted: all.",
        "limit": "Questions per answer at most (default 50).",
    },
)
async def human_responses(session: AsyncSession, who: Caller, a: HumanResponsesArgs) -> dict[str, Any]:
    found = await people.listing(
        session,
        who,
        a.documentId,
        kind=EscalationKind.QUESTION,
        state=human_wire.query_state_of(a.status),
        limit=a.limit,
        offset=a.offset,
    )
    return human_wire.HumanQueryList.of(found).model_dump(mode="json")


class PollArgs(DocArgs, events_wire.PollQuery):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


@tool(
    "pact_poll",
    "Poll for changes",
    "Changes on the document since your last cursor (start without one), oldest first; returns the next "
    "cursor and whether more are waiting.",
    PollArgs,
    events_wire.Poll,
    "tap:read",
    Effect.READS,
    params={"sectionId": "Only the changes of this section (as pact_sections gives it); omitted: all."},
)
async def poll(session: AsyncSession, who: Caller, a: PollArgs) -> dict[str, Any]:
    page = await tap.poll(session, who, a.documentId, since=a.since, section_id=a.sectionId, limit=a.limit)
    return events_wire.Poll.of(page).model_dump(mode="json")


# ---- completion (PACT's done signal) ------------------------------------------------------------------


class DoneArgs(DocArgs, schemas.DoneBody):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


@tool(
    "pact_done",
    "Signal you are done",
    "Say you have finished your work on the document and where you stand on it: aligned (you agree with it "
    "as it stands), dissenting, partial (you did some of your work) or abstained. A later signal replaces "
    "your earlier one; the other agents see it in pact_completions and as an event.",
    DoneArgs,
    schemas.DocumentDone,
    "tap:write",
    Effect.REPLACES,
    params={
        "status": "aligned, dissenting, partial or abstained (abstain, the hub's older word, is taken too).",
        "summary": "What you did, or why you stand where you do (optional; omitted clears your earlier one).",
    },
)
async def done(session: AsyncSession, who: Caller, a: DoneArgs) -> dict[str, Any]:
    signal = await completions.done(session, who, a.documentId, status=a.status, summary=a.summary)
    return schemas.DocumentDone.of(signal).model_dump(mode="json")


@tool(
    "pact_completions",
    "List completions",
    "The agents' done signals on the document, one per agent (its latest), oldest first: status, summary, "
    "when, and whether the agent is still joined.",
    DocArgs,
    completions_wire.CompletionList,
    "tap:read",
    Effect.READS,
)
async def completions_list(session: AsyncSession, who: Caller, a: DocArgs) -> dict[str, Any]:
    found = await completions.completions_of(session, who, a.documentId)
    return completions_wire.CompletionList.of(found).model_dump(mode="json")


# ---- proposals (the shared consensus engine with the document policy) -------------------------------


class ProposeArgs(DocArgs, schemas.ProposalBody):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class ProposalFilterArgs(DocArgs, schemas.ProposalQuery):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class VoteArgs(DocArgs):
    proposalId: str = Field(min_length=1, max_length=36)
    reason: str | None = Field(default=None, max_length=1000)


class RejectArgs(VoteArgs):
    reason: str = Field(min_length=1, max_length=1000)


@tool(
    "pact_propose",
    "Propose a section's new content",
    f"Propose new content for one section; the editors and reviewers vote on it. It is merged when approvals "
    f"reach two (or every other voter, if fewer), rejected by as many rejections, and paused for a human by "
    f"an objection. A proposal lives ttlSeconds (default {proposals.DEFAULT_TTL} s, five minutes): still "
    f"pending then, it is merged if it has an approval and no rejection or objection, else it expires. "
    f"Every call adds a proposal.",
    ProposeArgs,
    schemas.Proposal,
    "tap:write",
    Effect.ADDS,
    params={
        "sectionId": "The section to change (as pact_sections gives it).",
        "ttlSeconds": f"How long the proposal stays open for votes (default {proposals.DEFAULT_TTL} s); "
        "then it is merged if approved without rejection or objection, else it expires.",
    },
)
async def propose(session: AsyncSession, who: Caller, a: ProposeArgs) -> dict[str, Any]:
    made = await proposals.propose(
        session,
        who,
        a.documentId,
        section_id=a.sectionId,
        content=a.content,
        summary=a.summary,
        ttl_seconds=a.ttlSeconds,
    )
    return schemas.Proposal.of(made).model_dump(mode="json")


@tool(
    "pact_proposals",
    "List proposals",
    "Proposals on the document with their vote counts, optionally by section and status.",
    ProposalFilterArgs,
    schemas.ProposalList,
    "tap:read",
    Effect.READS,
    params={"sectionId": "Only the proposals on this section (as pact_sections gives it); omitted: all."},
)
async def list_proposals(session: AsyncSession, who: Caller, a: ProposalFilterArgs) -> dict[str, Any]:
    found = await proposals.list_proposals(
        session, who, a.documentId, section_id=a.sectionId, status=a.status
    )
    return schemas.ProposalList.of(found).model_dump(mode="json")


@tool(
    "pact_approve",
    "Approve a proposal",
    "Approve a proposal (not your own). The approval that completes the vote merges the proposal: its "
    "content replaces the section's, and rival pending proposals on the section are superseded.",
    VoteArgs,
    schemas.VoteResult,
    "tap:write",
    Effect.REPLACES,
)
async def approve(session: AsyncSession, who: Caller, a: VoteArgs) -> dict[str, Any]:
    cast = await proposals.vote(session, who, a.documentId, a.proposalId, "approve", a.reason)
    return schemas.VoteResult.of(cast).model_dump(mode="json")


@tool(
    "pact_reject",
    "Reject a proposal",
    "Reject a proposal (not your own), giving the reason; the rejection that completes the vote closes it "
    "as rejected.",
    RejectArgs,
    schemas.VoteResult,
    "tap:write",
    Effect.REPLACES,
    params={"reason": "Why you reject it, for the author and the reviewers (required)."},
)
async def reject(session: AsyncSession, who: Caller, a: RejectArgs) -> dict[str, Any]:
    cast = await proposals.vote(session, who, a.documentId, a.proposalId, "reject", a.reason)
    return schemas.VoteResult.of(cast).model_dump(mode="json")


@tool(
    "pact_object",
    "Object to a proposal",
    "Object to a proposal (not your own): it pauses as objected until a human reviewer decides.",
    VoteArgs,
    schemas.VoteResult,
    "tap:write",
    Effect.REPLACES,
)
async def object_(session: AsyncSession, who: Caller, a: VoteArgs) -> dict[str, Any]:
    cast = await proposals.vote(session, who, a.documentId, a.proposalId, "object", a.reason)
    return schemas.VoteResult.of(cast).model_dump(mode="json")


class WithdrawArgs(DocArgs):
    proposalId: str = Field(min_length=1, max_length=36)


@tool(
    "pact_withdraw",
    "Withdraw your proposal",
    "Withdraw your own proposal while it is pending: it leaves the vote as withdrawn, and an escalation "
    "its approval policy raised for it is closed. A decided proposal (merged, rejected, objected, expired) "
    "cannot be withdrawn.",
    WithdrawArgs,
    schemas.Proposal,
    "tap:write",
    Effect.REPLACES,
)
async def withdraw(session: AsyncSession, who: Caller, a: WithdrawArgs) -> dict[str, Any]:
    withdrawn = await proposals.withdraw(session, who, a.documentId, a.proposalId)
    return schemas.Proposal.of(withdrawn).model_dump(mode="json")


# ---- session awareness (PACT v2.0.3 §4.4: domain/consensus/sessions.py) ------------------------------


class StatusArgs(DocArgs):
    include: str | None = Field(default=None, max_length=200)


@tool(
    "pact_status",
    "Where the document's negotiation stands",
    "The document's session snapshot: its phase (forming, negotiating, converged, escalated, closed), the "
    "agents on it with when each was last seen and whether it is live or stale, the latest event, the "
    "obligations pending (votes owed) and the open proposals and intents. For agents joined to it.",
    StatusArgs,
    sessions_wire.StatusOut,
    "tap:read",
    Effect.READS,
)
async def pact_status(session: AsyncSession, who: Caller, a: StatusArgs) -> dict[str, Any]:
    found = await doc_sessions.status(session, who, a.documentId, a.include)
    return sessions_wire.StatusOut.of(found).model_dump(mode="json", exclude_none=True)


@tool(
    "pact_manifest",
    "What concerns you on the document",
    "Your view of the document: your role, the constraints that bind you, the votes you owe "
    "(obligations_by_ref, by proposal), the other agents with their liveness, and the events you have not "
    "marked read yet. For agents joined to it.",
    DocArgs,
    sessions_wire.ManifestOut,
    "tap:read",
    Effect.READS,
)
async def pact_manifest(session: AsyncSession, who: Caller, a: DocArgs) -> dict[str, Any]:
    found = await doc_sessions.manifest(session, who, a.documentId)
    return sessions_wire.ManifestOut.of(found).model_dump(mode="json", exclude_none=True)


class HeartbeatArgs(DocArgs, sessions_wire.HeartbeatBody):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


@tool(
    "pact_heartbeat",
    "Say you are present",
    "Tell the others you are still here (optionally that you want their attention); answers who else is "
    "live or stale and how many votes you owe. A repeat with the same client_heartbeat_id within five "
    "minutes gets the same answer and records nothing.",
    HeartbeatArgs,
    sessions_wire.HeartbeatOut,
    "tap:write",
    Effect.CLAIMS,
)
async def pact_heartbeat(session: AsyncSession, who: Caller, a: HeartbeatArgs) -> dict[str, Any]:
    beat = await doc_sessions.heartbeat(
        session,
        who,
        a.documentId,
        client_heartbeat_id=a.client_heartbeat_id,
        attention_required=a.attention_required,
        observed_event_id=a.client_observed_event_id,
    )
    return sessions_wire.HeartbeatOut.of(beat).model_dump(mode="json", exclude_none=True)


class MarkReadArgs(DocArgs, sessions_wire.MarkReadBody):
    # No json_schema_extra: the REST body's "a whole range" is a top-level anyOf, which Anthropic's API
    # refuses in a tool's input schema; the domain refuses a partial range (mark-read.invalid_range).
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, json_schema_extra=None)


@tool(
    "pact_mark_read",
    "Mark events read",
    "Acknowledge that you processed the document's events from_event_id to to_event_id (evt_n, as "
    "pact_poll gives them; or by sequence numbers), so the others see how far you have read. Your read "
    "cursor only moves forward: a range you already covered changes nothing.",
    MarkReadArgs,
    sessions_wire.MarkReadOut,
    "tap:write",
    Effect.CLAIMS,
)
async def pact_mark_read(session: AsyncSession, who: Caller, a: MarkReadArgs) -> dict[str, Any]:
    marked = await doc_sessions.mark_read(
        session,
        who,
        a.documentId,
        from_event_id=a.from_event_id,
        to_event_id=a.to_event_id,
        from_seq=a.from_sequence_number,
        to_seq=a.to_sequence_number,
    )
    return sessions_wire.MarkReadOut.of(marked).model_dump(mode="json", exclude_none=True)


class OnboardConstraintArg(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    sectionId: str = Field(
        min_length=1, max_length=256, description="The section (as pact_sections gives it)."
    )
    boundary: str = Field(min_length=1, max_length=2000, description="The rule for the section, in words.")
    type: ConstraintTypeField = Field(
        default=ConstraintType.MUST_NOT,
        description="How binding: must, must_not (the default), should, should_not, prefer.",
    )


class OnboardArgs(DocArgs):
    agentName: str | None = Field(default=None, min_length=1, max_length=128)
    role: Literal["editor", "reviewer", "observer", "contributor", "proposer"] = "editor"
    capabilities: list[Literal["propose", "vote"]] | None = Field(default=None, max_length=20)
    inviteToken: str | None = Field(default=None, max_length=200)
    constraints: list[OnboardConstraintArg] = Field(default_factory=list, max_length=50)
    contact: sessions_wire.ContactIn | None = None


@tool(
    "pact_onboard",
    "Join with your constraints",
    "Join the document and publish your constraints in one step: either you are a member with all of them "
    "published, or (a constraint refused: its index and reason are in the error) nothing happened. Without "
    "agentName your key's name is used. Use pact_join to join without constraints.",
    OnboardArgs,
    DocumentOnboarded,
    "tap:write",
    Effect.CLAIMS,
    params={
        "role": "editor (the default), reviewer or observer, or PACT's role descriptor: contributor or "
        "proposer (join as editor), observer; the answer and your manifest show it as given.",
    },
)
async def pact_onboard(session: AsyncSession, who: Caller, a: OnboardArgs) -> dict[str, Any]:
    declared = doc_sessions.PactRole(a.role) if a.role in set(doc_sessions.PactRole) else None
    join = tap.JoinRequest(
        a.agentName or "",  # none: the key's name
        role=doc_sessions.DOCUMENT_ROLE[declared] if declared else a.role,
        capabilities=a.capabilities,
        invite_token=a.inviteToken,
    )
    drafts = [ConstraintDraft(c.sectionId, c.boundary, c.type) for c in a.constraints]
    done = await doc_sessions.onboard(
        session,
        who,
        a.documentId,
        join,
        drafts,
        declared_role=declared,
        contact=a.contact.kept() if a.contact else None,
    )
    reg = schemas.Joined.of(done.registration)
    out = DocumentOnboarded(registration=reg, **sessions_wire.OnboardedOut.fields(done, reg.agentId))
    return out.model_dump(mode="json")
