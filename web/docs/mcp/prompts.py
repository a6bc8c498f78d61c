"""MCP prompts for the common jobs on a document: review a section, propose an edit within its constraints.
Each one gathers what the job needs (the section's Markdown, its constraints, intents and pending
proposals) with the caller's own access, and says which tools to use."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as mt

from domain.documents.access import Caller
from domain.kernel.errors import BadRequest
from runtime.process import Runtime
from web.docs.mcp import resources
from web.docs.mcp.tools import TOOLS

Builder = Callable[[Runtime, Caller, dict[str, str]], Awaitable[str]]


@dataclass(frozen=True)
class Prompt:
    name: str
    title: str
    description: str
    arguments: tuple[mt.PromptArgument, ...]
    build: Builder

    def listed(self) -> mt.Prompt:
        return mt.Prompt(
            name=self.name, title=self.title, description=self.description, arguments=list(self.arguments)
        )


DOCUMENT = mt.PromptArgument(name="documentId", description="The document's id.", required=True)
SECTION = mt.PromptArgument(
    name="sectionId", description="The section's id (from pact_sections).", required=True
)


async def _tool(rt: Runtime, who: Caller, name: str, **arguments: Any) -> dict[str, Any]:
    tool = TOOLS[name]
    return await tool.handler(rt, who, tool.args.model_validate(arguments))


async def _section_facts(rt: Runtime, who: Caller, doc: str, sec: str) -> dict[str, Any]:
    read = await resources.read(rt, who, resources.Target(doc, sec).uri)
    text = read.contents[0].text if isinstance(read.contents[0], mt.TextResourceContents) else ""
    return {
        "markdown": text,
        "constraints": (await _tool(rt, who, "pact_constraints", documentId=doc, sectionId=sec))[
            "constraints"
        ],
        "intents": (await _tool(rt, who, "pact_intents", documentId=doc, sectionId=sec))["intents"],
        "pending": (await _tool(rt, who, "pact_proposals", documentId=doc, sectionId=sec, status="pending"))[
            "proposals"
        ],
    }


def _listing(items: list[dict[str, Any]], empty: str) -> str:
    return "\n".join(f"- {json.dumps(item, default=str)}" for item in items) if items else empty


async def review_section(rt: Runtime, who: Caller, args: dict[str, str]) -> str:
    doc, sec = args["documentId"], args["sectionId"]
    facts = await _section_facts(rt, who, doc, sec)
    return (
        f"Review section {sec} of document {doc} (resource {resources.Target(doc, sec).uri}).\n\n"
        f"Current text:\n\n{facts['markdown']}\n\n"
        f"Constraints published for this section (a proposal must respect them):\n"
        f"{_listing(facts['constraints'], '- none')}\n\n"
        f"Pending proposals on this section:\n{_listing(facts['pending'], '- none')}\n\n"
        "For each pending proposal, check it against the constraints and the text around it, then vote "
        "with pact_approve, pact_reject (give the reason) or pact_object (pauses it for a human reviewer). "
        "If something needs a person's decision, ask with pact_escalate. Join the document first "
        "(pact_join, role reviewer or editor) if you have not."
    )


async def propose_edit(rt: Runtime, who: Caller, args: dict[str, str]) -> str:
    doc, sec = args["documentId"], args["sectionId"]
    goal = args.get("goal") or "improve the section"
    facts = await _section_facts(rt, who, doc, sec)
    return (
        f"Propose an edit to section {sec} of document {doc}; the goal: {goal}.\n\n"
        f"Current text:\n\n{facts['markdown']}\n\n"
        f"Constraints you must follow (must / must_not are hard limits, should / should_not / prefer are "
        f"guidance):\n{_listing(facts['constraints'], '- none')}\n\n"
        f"Intents other agents declared on this section:\n{_listing(facts['intents'], '- none')}\n\n"
        f"Proposals already pending here:\n{_listing(facts['pending'], '- none')}\n\n"
        "Steps: pact_join the document as an editor if you have not; pact_intent_declare your goal; "
        "pact_lock the section while you write; pact_propose the section's new text (its own body, without "
        "the heading) with a one-line summary; pact_unlock. Other agents then vote on it."
    )


PROMPTS: dict[str, Prompt] = {
    p.name: p
    for p in (
        Prompt(
            "review_section",
            "Review a section",
            "Read a section with its constraints and pending proposals, and vote on the proposals.",
            (DOCUMENT, SECTION),
            review_section,
        ),
        Prompt(
            "propose_edit",
            "Propose an edit following the constraints",
            "Write a proposal for a section that respects its published constraints.",
            (
                DOCUMENT,
                SECTION,
                mt.PromptArgument(name="goal", description="What the edit should achieve.", required=False),
            ),
            propose_edit,
        ),
    )
}


async def get(rt: Runtime, who: Caller, name: str, arguments: dict[str, str]) -> mt.GetPromptResult:
    prompt = PROMPTS.get(name)
    if prompt is None:
        raise BadRequest(f"unknown prompt {name!r}; known: {', '.join(PROMPTS)}", field="name")
    missing = [a.name for a in prompt.arguments if a.required and not arguments.get(a.name)]
    if missing:
        raise BadRequest(f"prompt {name} needs the argument(s) {', '.join(missing)}", field=missing[0])
    text = await prompt.build(rt, who, arguments)
    return mt.GetPromptResult(
        description=prompt.description,
        messages=[mt.PromptMessage(role="user", content=mt.TextContent(type="text", text=text))],
    )
