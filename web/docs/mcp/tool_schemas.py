"""The JSON Schemas a tool is listed with, written for the model APIs behind MCP hosts (Anthropic's, OpenAI's:
tests/test_mcp_tool_schemas.py lints every tool against their rules, docs/decisions.md says why).

Input: an object schema with no combinator at its top level and no `$ref` (an enumeration is inlined); an
optional argument is given as its own type (leaving it out is how a caller says "none", and a `type` on every
parameter suits the hosts that cope badly with `anyOf`); every parameter has a human title and a description,
from `PARAMETERS` or from the tool (`Tool.params`), `documentId` first. Output: the REST response model's
schema, nullable where the answer may hold null, without pydantic's generated field titles."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from domain.documents import proposals


class Parameter(NamedTuple):
    title: str
    description: str


# What each argument name means wherever it is used; a tool says more of its own in `Tool.params`.
PARAMETERS: dict[str, Parameter] = {
    "documentId": Parameter(
        "Document ID", "The document's id, as pact_list_documents or pact_upload_document give it."
    ),
    "sectionId": Parameter(
        "Section ID", "The section's id, as pact_sections gives it (e.g. sec:budget:line-items)."
    ),
    "proposalId": Parameter("Proposal ID", "The proposal's id, as pact_propose or pact_proposals give it."),
    "intentId": Parameter("Intent ID", "The intent's id, as pact_intents gives it."),
    "tag": Parameter("Tag", "Only documents with this tag."),
    "page": Parameter("Page", "Page number, from 1."),
    "pageSize": Parameter("Page size", "Documents per page (default 20)."),
    "filename": Parameter(
        "File name",
        "The file's name with its extension, e.g. brief.docx: the default title, and for text what it is "
        "(.md Markdown, .html HTML, .txt plain text).",
    ),
    "contentBase64": Parameter("Content (base64)", "The file's bytes, base64-encoded."),
    "title": Parameter("Title", "The document's title (default: the file name without its extension)."),
    "tags": Parameter("Tags", "Labels to find the document by (pact_list_documents' tag)."),
    "approvalPolicy": Parameter(
        "Approval policy",
        "How proposals merge: concord-default (two approvals, the default), objection-based (merges at its "
        "TTL unless an agent objects), single, majority, unanimous, human-only (a reviewer decides) or auto.",
    ),
    "allowSelfApproval": Parameter(
        "Allow self-approval",
        "Under single, majority and unanimous, count an author's approval of its own proposal "
        "(default false).",
    ),
    "agentName": Parameter(
        "Agent name",
        "The name the other agents and the reviewers know you by on this document (unique on it).",
    ),
    "role": Parameter(
        "Role", "editor (proposes and votes, the default), reviewer (votes) or observer (reads only)."
    ),
    "capabilities": Parameter(
        "Capabilities",
        "The consensus acts to take, of propose and vote. Omitted: all the role allows (editor and reviewer: "
        "both; observer: none); asking for one the role does not allow is refused.",
    ),
    "inviteToken": Parameter("Invite token", "The invitation token, if the document's owner gave you one."),
    "contact": Parameter(
        "Contact",
        "Where a person reaches your operator: email and/or escalation_hook (an https:// URL). Shown to you "
        "and to members of your organisation, never to other organisations.",
    ),
    "goal": Parameter("Goal", "What you intend to change in the section, and why."),
    "category": Parameter(
        "Category", "A short label for the intent, e.g. wording or figures (default general)."
    ),
    "boundary": Parameter("Boundary", "The rule for the section's content, in words (e.g. Keep the totals)."),
    "type": Parameter(
        "Constraint type",
        "How binding the boundary is: must, must_not (the default), should, should_not, prefer.",
    ),
    "score": Parameter("Score", "How much the section matters to you: 0 (not at all) to 10 (must review)."),
    "ttlSeconds": Parameter(
        "Lifetime (seconds)", "How long the lock holds (default 300 s); lock again to renew it."
    ),
    "question": Parameter(
        "Question", "The question for the human reviewers. Give this or message (one of them is required)."
    ),
    "message": Parameter(
        "Message",
        "The same text as question under the PACT CLI's name: give one of them (both only if equal).",
    ),
    "priority": Parameter("Priority", "low, medium (the default) or high."),
    "context": Parameter("Context", "What the person needs to know to answer, if anything."),
    "timeoutSeconds": Parameter(
        "Timeout (seconds)",
        "How long to wait for the answer (default 60 s, at least 10); the server may grant less and says so.",
    ),
    "offset": Parameter("Offset", "How many to skip, for the next page (default 0)."),
    "since": Parameter("Since", "The cursor the last poll returned; omitted: from the start."),
    "limit": Parameter("Limit", "Changes per answer at most (default 50)."),
    "content": Parameter(
        "Content",
        "The section's new Markdown body (without its heading), replacing the current one if merged.",
    ),
    "summary": Parameter("Summary", "One line saying what the proposal changes, for the voters."),
    "status": Parameter("Status", f"Only proposals in this status: {', '.join(proposals.ProposalStatus)}."),
    "reason": Parameter("Reason", "Why, for the author and the reviewers (optional)."),
    "include": Parameter(
        "Include",
        "Comma-separated parts of the snapshot: members, phase, latest_event, obligations, activity "
        "(omitted: all).",
    ),
    "client_heartbeat_id": Parameter(
        "Heartbeat ID", "A new UUID per heartbeat; repeating one within five minutes repeats its answer."
    ),
    "attention_required": Parameter(
        "Attention required", "true to tell the others you are about to act and want their attention."
    ),
    "client_observed_event_id": Parameter(
        "Last event seen", "The latest event you processed (evt_n); the answer says how far behind you are."
    ),
    "from_event_id": Parameter("From event", "The first event of the range you read (evt_n)."),
    "to_event_id": Parameter("To event", "The last event of the range you read (evt_n), inclusive."),
    "from_sequence_number": Parameter(
        "From sequence number", "The range's first event by number (instead of from_event_id)."
    ),
    "to_sequence_number": Parameter(
        "To sequence number", "The range's last event by number (instead of to_event_id), inclusive."
    ),
    "constraints": Parameter(
        "Constraints",
        "The constraints to publish as you join, each a sectionId, a boundary and a type; all are published "
        "or, if one is refused, none and you do not join.",
    ),
}


class ToolInputSchema(GenerateJsonSchema):
    """An optional argument as its own type, not `anyOf` with null (null is still accepted: it is omitted)."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])


class ToolOutputSchema(GenerateJsonSchema):
    """No field titles: pydantic's are the field names run together (`Documentid`)."""

    def field_title_should_be_set(self, schema: CoreSchema | Any) -> bool:
        return False


def _inline(spec: Any, defs: Mapping[str, Any]) -> Any:
    """`spec` with every `$ref` inside it replaced by the definition it names (titles of inlined models
    dropped)."""
    if isinstance(spec, list):
        return [_inline(item, defs) for item in spec]
    if not isinstance(spec, dict):
        return spec
    if "$ref" in spec:
        named = dict(defs[spec["$ref"].rsplit("/", 1)[-1]])
        named.pop("title", None)
        spec = {**named, **{k: v for k, v in spec.items() if k != "$ref"}}
    return {key: _inline(value, defs) for key, value in spec.items()}


def input_schema(model: type[BaseModel], params: Mapping[str, str]) -> dict[str, Any]:
    """The tool's `inputSchema`: `model`'s fields, titled and described (`params` before `PARAMETERS`)."""
    schema = model.model_json_schema(schema_generator=ToolInputSchema)
    schema.pop("title", None)
    defs: dict[str, Any] = schema.pop("$defs", {})
    properties: dict[str, Any] = schema.get("properties", {})
    described: dict[str, Any] = {}
    for name in sorted(properties, key=lambda n: n != "documentId"):  # stable: the model's order otherwise
        spec = properties[name]
        if "$ref" in spec:  # a vocabulary (a StrEnum) goes inline: no `$ref` in an input schema
            spec = {**defs[spec.pop("$ref").rsplit("/", 1)[-1]], **spec}
        spec = _inline(spec, defs)  # so does the item model of a list (pact_onboard's constraints)
        known = PARAMETERS.get(name)
        if known is None:
            raise LookupError(
                f"{model.__name__}.{name} has no entry in PARAMETERS: give it a title and a description"
            )
        spec["title"] = known.title
        spec["description"] = params.get(name) or known.description
        if "default" in spec and spec["default"] is None:
            del spec["default"]  # no default is what omitting it means
        described[name] = spec
    schema["properties"] = described
    return schema


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The tool's `outputSchema`: what `model` (the REST answer) serialises to."""
    schema = model.model_json_schema(mode="serialization", schema_generator=ToolOutputSchema)
    schema.pop("title", None)
    return schema
