"""A client of the official MCP Python SDK's 1.x line (`mcp>=1.25,<2`, in .mcp1-venv) taking a document
from upload to a merged proposal on Concord's /mcp, through tools and resources, as a desktop client built
on 1.x would. tests/test_mcp_v1_client.py runs it against the test's document app; it prints a JSON summary
on stdout, which the test checks.

    .mcp1-venv/bin/python tests/mcp1/drive.py http://127.0.0.1:8081/mcp --file notes.md \\
        --section sec:notes --content "New text." --key alice=svc_sk_… --key bob=svc_sk_… --key carol=svc_sk_…

The first key uploads and proposes; every other key joins as a reviewer and approves, in order.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import sys
import warnings
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from mcp import ClientSession, types
from mcp.client.streamable_http import streamablehttp_client
from pydantic import AnyUrl

# Later 1.x releases deprecate streamablehttp_client for streamable_http_client; the older name is the one
# every release from 1.25 on has, so it is the one used here.
warnings.simplefilter("ignore", DeprecationWarning)

HANDSHAKE_REVISIONS = {"2025-11-25", "2025-06-18", "2025-03-26"}  # what Concord answers an initialize with


def text_of(result: types.CallToolResult) -> str:
    return next((c.text for c in result.content if isinstance(c, types.TextContent)), "")


async def call(session: ClientSession, name: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(name, arguments)
    if result.isError:
        raise RuntimeError(f"{name} failed: {text_of(result)}")
    answer: dict[str, Any] = result.structuredContent or json.loads(text_of(result))
    return answer


async def markdown(session: ClientSession, uri: str) -> str:
    result = await session.read_resource(AnyUrl(uri))
    content = result.contents[0]
    if not isinstance(content, types.TextResourceContents) or content.mimeType != "text/markdown":
        raise RuntimeError(f"{uri} is not Markdown text: {content!r}")
    return content.text


def section_ids(tree: list[dict[str, Any]]) -> Iterator[str]:
    for node in tree:
        yield node["sectionId"]
        yield from section_ids(node.get("children", []))


async def wait_ready(session: ClientSession, document_id: str) -> None:
    for _ in range(600):
        status = (await call(session, "pact_get_document", documentId=document_id))["status"]
        if status == "ready":
            return
        if status != "processing":
            raise RuntimeError(f"the document ended {status}")
        await asyncio.sleep(0.1)
    raise RuntimeError("the document never became ready")


async def drive(
    url: str, keys: list[tuple[str, str]], data: bytes, filename: str, section: str, content: str
) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        sessions: list[ClientSession] = []
        for name, key in keys:
            read, write, _ = await stack.enter_async_context(
                streamablehttp_client(url, headers={"X-Api-Key": key}, timeout=30)
            )
            session = await stack.enter_async_context(
                ClientSession(read, write, client_info=types.Implementation(name=f"mcp1-{name}", version="1"))
            )
            init = await session.initialize()
            if init.protocolVersion not in HANDSHAKE_REVISIONS:
                raise RuntimeError(f"negotiated {init.protocolVersion!r}, not a handshake revision")
            sessions.append(session)
            summary.setdefault("protocolVersions", []).append(init.protocolVersion)
            summary.setdefault("serverName", init.serverInfo.name)
        author, reviewers = sessions[0], sessions[1:]
        await author.send_ping()
        listed = (await author.list_tools()).tools
        summary["tools"] = sorted(t.name for t in listed)
        # As a 1.x host parses them: what it would hand a model API (checked by the test's tool-schema lint).
        summary["toolList"] = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed]

        uploaded = await call(
            author,
            "pact_upload_document",
            filename=filename,
            contentBase64=base64.b64encode(data).decode(),
        )
        document_id = uploaded["id"]
        summary["documentId"] = document_id
        await wait_ready(author, document_id)
        summary["resources"] = [str(r.uri) for r in (await author.list_resources()).resources]
        summary["templates"] = sorted(
            t.uriTemplate for t in (await author.list_resource_templates()).resourceTemplates
        )
        doc_uri = f"concord://documents/{document_id}"
        section_uri = f"{doc_uri}/sections/{section}"
        summary["documentBefore"] = await markdown(reviewers[0], doc_uri)
        summary["sectionBefore"] = await markdown(reviewers[0], section_uri)

        await call(author, "pact_join", documentId=document_id, agentName=keys[0][0], role="editor")
        for (name, _), reviewer in zip(keys[1:], reviewers, strict=True):
            await call(reviewer, "pact_join", documentId=document_id, agentName=name, role="reviewer")
        tree = (await call(author, "pact_sections", documentId=document_id))["sections"]
        summary["sections"] = list(section_ids(tree))
        proposal = await call(
            author,
            "pact_propose",
            documentId=document_id,
            sectionId=section,
            content=content,
            summary="Via 1.x",
        )
        proposal_id = proposal["proposalId"]
        own = await author.call_tool("pact_approve", {"documentId": document_id, "proposalId": proposal_id})
        summary["ownVote"] = {"isError": own.isError, "body": json.loads(text_of(own))}
        summary["votes"] = [
            (await call(reviewer, "pact_approve", documentId=document_id, proposalId=proposal_id))["status"]
            for reviewer in reviewers
        ]
        merged = await call(author, "pact_proposals", documentId=document_id)
        summary["proposals"] = [
            {"proposalId": p["proposalId"], "status": p["status"]} for p in merged["proposals"]
        ]
        summary["sectionAfter"] = await markdown(author, section_uri)
        summary["documentAfter"] = await markdown(reviewers[-1], doc_uri)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("url", help="the document app's /mcp URL")
    parser.add_argument("--file", type=Path, required=True, help="the document to upload")
    parser.add_argument("--section", required=True, help="the section id to propose new content for")
    parser.add_argument("--content", required=True, help="the proposed content of that section")
    parser.add_argument(
        "--key", action="append", required=True, metavar="NAME=KEY", help="an agent and its service key"
    )
    args = parser.parse_args(argv)
    keys = [tuple(k.split("=", 1)) for k in args.key]
    if len(keys) < 2 or any(len(k) != 2 for k in keys):
        parser.error("give at least two --key NAME=KEY: an author and a reviewer")
    summary = asyncio.run(
        drive(
            args.url,
            [(k[0], k[1]) for k in keys],
            args.file.read_bytes(),
            args.file.name,
            args.section,
            args.content,
        )
    )
    json.dump(summary, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
