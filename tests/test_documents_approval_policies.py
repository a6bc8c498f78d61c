"""Approval policies on documents (PACT v2.0.3 §5), over HTTP: set at upload (a form field, or an argument
of the MCP upload tool), shown on every read of the document, changed with PATCH /api/documents/{id} by the
key that uploaded it; each policy's merges and rejections with the document's roles (observers never
count); objections paused for the reviewers' desk; human-only proposals decided by a reviewer."""

from __future__ import annotations

import base64
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from domain import wiring
from domain.kernel import sweeps
from tests.axiom_helpers import staff_headers
from tests.documents_support import content, make_key, upload, upload_ready
from tests.test_mcp import call, connect

MD = b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n\n## Risks\n\nMany.\n"
SWEEP = "documents.expire_proposals"


@pytest.fixture
async def reviewer(runtime: Any) -> dict[str, str]:
    return await staff_headers(runtime, "Rey Reviewer", roles=("reviewer",))


async def team(
    docs: Any,
    runtime: Any,
    policy: str | None,
    roles: tuple[str, ...] = ("editor", "reviewer", "reviewer"),
    **more: str,
) -> tuple[list[dict], dict, str]:
    """A ready document uploaded by the first key with `policy`, joined by one agent per key and role."""
    keys = [await make_key(runtime, org="Acme", name=f"k{i}") for i in range(len(roles))]
    fields = {"approvalPolicy": policy, **more} if policy else more
    doc = await upload_ready(docs, keys[0], MD, "plan.md", **fields)
    base = f"/api/tap/{doc['id']}"
    for i, (key, role) in enumerate(zip(keys, roles, strict=True)):
        resp = await docs.post(
            f"{base}/join", headers=key["headers"], json={"agentName": f"agent{i}", "role": role}
        )
        assert resp.status == 201, await resp.text()
    return keys, doc, base


async def propose(docs: Any, key: dict, base: str, text: str = "More money.", **body: Any) -> dict[str, Any]:
    payload = {"sectionId": "sec:plan:budget", "content": text, "summary": "s", **body}
    resp = await docs.post(f"{base}/proposals", headers=key["headers"], json=payload)
    assert resp.status == 201, await resp.text()
    return dict(await resp.json())


async def vote(docs: Any, key: dict, base: str, pid: str, kind: str, expect: int = 200) -> dict[str, Any]:
    body = {"reason": "because"} if kind != "approve" else None
    resp = await docs.post(f"{base}/proposals/{pid}/{kind}", headers=key["headers"], json=body)
    assert resp.status == expect, await resp.text()
    return dict(await resp.json())


async def status_of(docs: Any, key: dict, base: str, pid: str) -> str:
    listed = await (await docs.get(f"{base}/proposals", headers=key["headers"])).json()
    return str(next(p["status"] for p in listed["proposals"] if p["proposalId"] == pid))


def files_under(folder: Path) -> set[str]:
    return {str(p) for p in Path(folder).rglob("*") if p.is_file()}


async def sweep(runtime: Any) -> int:
    return await sweeps.run(runtime.db, next(s for s in wiring.SWEEPS if s.name == SWEEP), "test")


async def test_the_policy_is_set_at_upload_shown_on_reads_and_changed_by_the_owner_only(
    docs, runtime, tmp_path
):
    owner = await make_key(runtime, org="Acme", name="owner")
    colleague = await make_key(runtime, org="Acme", name="colleague")
    stranger = await make_key(runtime, org="Elsewhere")
    resp = await upload(docs, owner, MD, "plan.md", approvalPolicy="majority", allowSelfApproval="true")
    assert resp.status == 202, await resp.text()
    accepted = await resp.json()
    assert (accepted["approvalPolicy"], accepted["allowSelfApproval"]) == ("majority", True)
    doc_id = accepted["id"]
    default = await upload_ready(docs, owner, MD, "default.md")
    assert (default["approvalPolicy"], default["allowSelfApproval"]) == ("concord-default", False)
    listed = await (await docs.get("/api/documents", headers=owner["headers"])).json()
    assert {d["id"]: d["approvalPolicy"] for d in listed["data"]}[doc_id] == "majority"

    url = f"/api/documents/{doc_id}"
    refused = await docs.patch(url, headers=colleague["headers"], json={"approvalPolicy": "auto"})
    assert refused.status == 403
    assert (await refused.json())["code"] == "not_owner"
    assert (await docs.patch(url, headers=stranger["headers"], json={"approvalPolicy": "auto"})).status == 404
    changed = await docs.patch(url, headers=owner["headers"], json={"approvalPolicy": "objection-based"})
    assert changed.status == 200, await changed.text()
    body = await changed.json()
    assert (body["approvalPolicy"], body["allowSelfApproval"], body["id"]) == (
        "objection-based",
        True,
        doc_id,
    )
    alias = await docs.patch(
        f"/api/masterdocuments/{doc_id}", headers=owner["headers"], json={"allowSelfApproval": False}
    )
    assert (await alias.json())["allowSelfApproval"] is False
    meta = await (await docs.get(url, headers=colleague["headers"])).json()
    assert (meta["approvalPolicy"], meta["allowSelfApproval"]) == ("objection-based", False)
    events = await (
        await docs.get(f"/api/tap/{doc_id}/events?after=0&limit=200", headers=owner["headers"])
    ).json()
    assert [e["data"]["approvalPolicy"] for e in events["events"] if e["type"] == "pact.policy.changed"] == [
        "objection-based",
        "objection-based",
    ]

    for bad, field in (
        ({"approvalPolicy": "quorum"}, "approvalPolicy"),
        ({"allowSelfApproval": "yes"}, "allowSelfApproval"),
    ):
        resp = await docs.patch(url, headers=owner["headers"], json=bad)
        assert resp.status == 400, bad
        assert (await resp.json())["field"] == field
    blobs = files_under(runtime.settings.blob_dir)
    for fields, field in (
        ({"approvalPolicy": "quorum"}, "approvalPolicy"),
        ({"approvalPolicy": ""}, "approvalPolicy"),
        ({"allowSelfApproval": "maybe"}, "allowSelfApproval"),
    ):
        resp = await upload(docs, owner, MD, "refused.md", **fields)
        assert resp.status == 400, fields
        assert (await resp.json())["field"] == field
    assert files_under(runtime.settings.blob_dir) == blobs  # the refused uploads left nothing behind


async def test_a_silent_proposal_merges_at_its_ttl_under_objection_based_and_never_under_the_default(
    docs, runtime, clock
):
    (a, _b, _c), silent_doc, silent = await team(docs, runtime, "objection-based")
    (d, _e, _f), default_doc, default = await team(docs, runtime, None)
    consented = await propose(docs, a, silent, "Nobody objected.", ttlSeconds=60)
    ignored = await propose(docs, d, default, "Nobody approved.", ttlSeconds=60)
    clock.advance(timedelta(seconds=61))
    assert await sweep(runtime) == 2
    assert await status_of(docs, a, silent, consented["proposalId"]) == "approved"
    assert "Nobody objected." in await content(docs, a, silent_doc["id"])
    assert await status_of(docs, d, default, ignored["proposalId"]) == "expired"
    assert "Nobody approved." not in await content(docs, d, default_doc["id"])


async def test_an_objection_pauses_a_proposal_for_the_desk_under_a_pact_policy(docs, hub, runtime, reviewer):
    (a, b, _c), _doc, base = await team(docs, runtime, "objection-based")
    made = await propose(docs, a, base)
    assert (await vote(docs, b, base, made["proposalId"], "object"))["status"] == "objected"
    queue = await (await hub.get("/api/review/proposals", headers=reviewer)).json()
    assert [p["proposalId"] for p in queue["proposals"]] == [made["proposalId"]]
    escalations = await (await hub.get("/api/review/escalations", headers=reviewer)).json()
    assert escalations["total"] == 0  # the desk shows it already
    vetoed = await propose(docs, a, base, "Vetoed.")
    assert (await vote(docs, b, base, vetoed["proposalId"], "reject"))["status"] == "rejected"


async def test_single_majority_and_unanimous_count_the_voting_roles(docs, runtime):
    roles = ("editor", "reviewer", "reviewer", "observer")
    (a, b, c, watcher), _doc, base = await team(docs, runtime, "single", roles)
    made = await propose(docs, a, base)
    assert (await vote(docs, watcher, base, made["proposalId"], "approve", 403))[
        "code"
    ] == "role.insufficient"
    result = await vote(docs, b, base, made["proposalId"], "approve")
    assert (result["status"], result["requiredApprovals"]) == ("approved", 1)

    (a, b, c, _w), _doc, base = await team(docs, runtime, "majority", roles)  # two voters: both needed
    made = await propose(docs, a, base)
    assert (await vote(docs, b, base, made["proposalId"], "approve"))["requiredApprovals"] == 2
    assert (await vote(docs, c, base, made["proposalId"], "approve"))["status"] == "approved"

    (a, b, c, _w), _doc, base = await team(docs, runtime, "unanimous", roles, allowSelfApproval="true")
    made = await propose(docs, a, base)
    first = await vote(docs, a, base, made["proposalId"], "approve")  # the author is a voter here
    assert (first["status"], first["requiredApprovals"]) == ("pending", 3)
    await vote(docs, b, base, made["proposalId"], "approve")
    assert (await vote(docs, c, base, made["proposalId"], "approve"))["status"] == "approved"
    vetoed = await propose(docs, b, base, "Vetoed.")
    assert (await vote(docs, c, base, vetoed["proposalId"], "reject"))["status"] == "rejected"


async def test_auto_merges_on_creation(docs, runtime):
    (a, _b, _c), doc, base = await team(docs, runtime, "auto")
    made = await propose(docs, a, base, "Straight in.")
    assert made["status"] == "approved"
    assert "Straight in." in await content(docs, a, doc["id"])


async def test_human_only_document_proposals_wait_for_a_reviewer(docs, hub, runtime, clock, reviewer):
    (a, b, _c), doc, base = await team(docs, runtime, "human-only")
    made = await propose(docs, a, base, "A person decides.", ttlSeconds=60)
    assert (await vote(docs, b, base, made["proposalId"], "approve", 403))["code"] == "human_only"
    clock.advance(timedelta(days=1))
    assert await sweep(runtime) == 0
    assert await status_of(docs, a, base, made["proposalId"]) == "pending"
    queue = await (await hub.get("/api/review/escalations?source=document", headers=reviewer)).json()
    [asked] = [e for e in queue["escalations"] if e["resourceId"] == doc["id"]]
    assert (asked["sectionText"], asked["proposal"]["newContent"]) == ("Money.", "A person decides.")
    resp = await hub.post(
        f"/api/review/escalations/{asked['escalationId']}/answer",
        headers=reviewer,
        json={"answer": "No: the budget stays.", "decision": "reject"},
    )
    assert resp.status == 200, await resp.text()
    assert await status_of(docs, a, base, made["proposalId"]) == "rejected"
    assert "A person decides." not in await content(docs, a, doc["id"])


async def test_the_mcp_upload_tool_takes_the_policy(docs, runtime):
    key = await make_key(runtime, org="Acme")
    async with connect(docs, key) as client:
        doc = await call(
            client,
            "pact_upload_document",
            filename="plan.md",
            contentBase64=base64.b64encode(MD).decode(),
            approvalPolicy="objection-based",
        )
        assert (doc["approvalPolicy"], doc["allowSelfApproval"]) == ("objection-based", False)
        meta = await call(client, "pact_get_document", documentId=doc["id"])
        assert meta["approvalPolicy"] == "objection-based"
