"""The MCP server driven by a real client of the official SDK's 1.x line (`mcp>=1.25,<2`), which cannot share
the project's venv with 2.x: tests/mcp1/drive.py runs with .mcp1-venv's python (`make mcp1-venv`, which
`make install` and `make test` run) against the test's document app on its loopback port, and takes a
document from upload to a merged proposal through tools and resources."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.documents_support import content, make_key
from tests.test_mcp_tool_schemas import problems

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ROOT / ".mcp1-venv" / "bin" / "python"
STAMP = ROOT / ".mcp1-venv" / ".installed"
DRIVE = ROOT / "tests" / "mcp1" / "drive.py"
HANDSHAKE_REVISIONS = {"2025-11-25", "2025-06-18", "2025-03-26"}
NOTES = b"# Notes\n\nFirst.\n\n## Plan\n\nDraft the plan.\n"


def mcp1_python() -> Path:
    """.mcp1-venv's python (or CONCORD_MCP1_PYTHON's, e.g. a venv with the lowest 1.x release); missing, the
    test fails saying how to build it (CONCORD_SKIP_MCP1=1 skips)."""
    if os.environ.get("CONCORD_SKIP_MCP1") == "1":
        pytest.skip("CONCORD_SKIP_MCP1=1: the MCP SDK 1.x client test is switched off")
    if other := os.environ.get("CONCORD_MCP1_PYTHON"):
        return Path(other)
    if not (PYTHON.exists() and STAMP.exists()):
        pytest.fail(
            f"the MCP SDK 1.x client venv is missing ({STAMP.parent}): run `make mcp1-venv` (or `make test`, "
            "which builds it), or set CONCORD_SKIP_MCP1=1 to skip this test",
            pytrace=False,
        )
    return PYTHON


async def test_a_1x_sdk_client_takes_a_document_to_a_merged_proposal(docs: Any, runtime: Any, tmp_path: Path):
    python = mcp1_python()
    keys = [await make_key(runtime, name=name) for name in ("alice", "bob", "carol")]
    upload = tmp_path / "notes.md"
    upload.write_bytes(NOTES)
    proc = await asyncio.create_subprocess_exec(  # asynchronous: the app under test answers it meanwhile
        str(python),
        str(DRIVE),
        str(docs.make_url("/mcp")),
        "--file",
        str(upload),
        "--section",
        "sec:notes:plan",
        "--content",
        "Ship the plan on Friday.",
        *[f"--key={name}={key['apiKey']}" for name, key in zip(("Alice", "Bob", "Carol"), keys, strict=True)],
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=180)
    assert proc.returncode == 0, err.decode()[-4000:]
    summary = json.loads(out)

    assert set(summary["protocolVersions"]) <= HANDSHAKE_REVISIONS
    assert summary["serverName"] == "concord-documents"
    assert len(summary["tools"]) == 34
    assert {"pact_upload_document", "pact_join", "pact_propose", "pact_approve"} <= set(summary["tools"])
    # Titles, annotations and output schemas survive 1.x's own models and pass the model APIs' rules there
    # too (and the 1.x client validated every structuredContent against its outputSchema on the way).
    found = {t["name"]: p for t in summary["toolList"] if (p := problems(t))}
    assert found == {}, found
    assert {t["name"]: t["annotations"]["readOnlyHint"] for t in summary["toolList"]}["pact_get"] is True
    doc_id = summary["documentId"]
    doc_uri = f"concord://documents/{doc_id}"
    assert summary["resources"] == [doc_uri]
    assert summary["templates"] == [
        "concord://documents/{documentId}",
        "concord://documents/{documentId}/sections/{sectionId}",
    ]
    assert summary["documentBefore"] == NOTES.decode()
    assert summary["sectionBefore"] == "## Plan\n\nDraft the plan.\n"
    assert summary["sections"] == ["sec:notes", "sec:notes:plan"]
    assert summary["ownVote"]["isError"]  # an author never votes on its own proposal
    assert summary["ownVote"]["body"]["status"] == 403
    assert summary["votes"] == ["pending", "approved"]  # two other voters: both approvals needed
    assert [p["status"] for p in summary["proposals"]] == ["approved"]
    assert "Ship the plan on Friday." in summary["sectionAfter"]
    assert "Draft the plan." not in summary["sectionAfter"]
    assert "Ship the plan on Friday." in summary["documentAfter"]
    assert "Ship the plan on Friday." in await content(docs, keys[0], doc_id)  # and over REST
