"""What a document join answers is what the agent may do: `capabilities` lists exactly the consensus acts
(propose, vote) its role allows, or the fewer it asked for, and every act it lists works while every act it
does not list is refused."""

from __future__ import annotations

from typing import Any

from tests.documents_support import make_key, upload_ready

MD = b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n\n## Risks\n\nMany.\n"


async def _join(docs: Any, key: dict[str, Any], base: str, name: str, **body: Any) -> Any:
    return await docs.post(f"{base}/join", headers=key["headers"], json={"agentName": name, **body})


async def _propose(docs: Any, key: dict[str, Any], base: str, section: str) -> Any:
    return await docs.post(
        f"{base}/proposals",
        headers=key["headers"],
        json={"sectionId": section, "content": "New text.", "summary": "s"},
    )


async def test_each_role_lists_what_it_may_do_and_may_do_what_it_lists(docs, runtime):
    author = await make_key(runtime, org="Acme", name="author")
    doc = await upload_ready(docs, author, MD, "plan.md")
    base = f"/api/pact/{doc['id']}"
    assert (await _join(docs, author, base, "Author")).status == 201
    authored = await _propose(docs, author, base, "sec:plan:risks")
    assert authored.status == 201
    target = (await authored.json())["proposalId"]

    expected = {"editor": ["propose", "vote"], "reviewer": ["propose", "vote"], "observer": []}
    for role, caps in expected.items():
        key = await make_key(runtime, org="Acme", name=role)
        resp = await _join(docs, key, base, role.title(), role=role)
        assert resp.status == 201, await resp.text()
        assert (await resp.json())["capabilities"] == caps
        proposed = await _propose(docs, key, base, "sec:plan:budget")
        voted = await docs.post(
            f"{base}/proposals/{target}/object", headers=key["headers"], json={"reason": "r"}
        )
        if caps:
            assert proposed.status == 201, await proposed.text()
            assert voted.status == 200, await voted.text()
            # The objection paused the target; the next role votes on a fresh one.
            fresh = await _propose(docs, author, base, "sec:plan")
            target = (await fresh.json())["proposalId"]
        else:
            for refused in (proposed, voted):
                assert refused.status == 403
                assert (await refused.json())["code"] == "role.insufficient"

    listed = await (await docs.get(f"{base}/agents", headers=author["headers"])).json()  # PACT path: an array
    assert {a["role"]: a["capabilities"] for a in listed if a["agentName"] != "Author"} == expected


async def test_a_join_may_ask_for_fewer_never_for_more(docs, runtime):
    author = await make_key(runtime, org="Acme", name="author")
    doc = await upload_ready(docs, author, MD, "plan.md")
    base = f"/api/tap/{doc['id']}"
    await _join(docs, author, base, "Author")
    target = (await (await _propose(docs, author, base, "sec:plan:risks")).json())["proposalId"]

    observer = await make_key(runtime, org="Acme", name="observer")
    resp = await _join(docs, observer, base, "Watcher", role="observer", capabilities=["propose", "vote"])
    assert resp.status == 400
    problem = await resp.json()
    assert problem["field"] == "capabilities"
    assert "role observer may not propose or vote" in problem["detail"]
    resp = await _join(docs, observer, base, "Watcher", role="editor", capabilities=["fly"])
    assert resp.status == 400
    assert "capabilities" in (await resp.json())["detail"]
    resp = await _join(docs, observer, base, "Watcher", role="observer", capabilities=[])
    assert resp.status == 201
    assert (await resp.json())["capabilities"] == []

    voter = await make_key(runtime, org="Acme", name="voter")
    resp = await _join(docs, voter, base, "Voter", role="reviewer", capabilities=["vote", "vote"])
    assert resp.status == 201
    assert (await resp.json())["capabilities"] == ["vote"]
    refused = await _propose(docs, voter, base, "sec:plan:budget")
    assert refused.status == 403
    assert (await refused.json())["code"] == "capability.missing"
    resp = await docs.post(f"{base}/proposals/{target}/approve", headers=voter["headers"], json={})
    assert resp.status == 200, await resp.text()


async def test_an_onboarding_states_and_keeps_the_roles_limits(docs, runtime):
    """PACT's onboarding takes a join's role and capabilities (and PACT's role descriptors): the document
    states each role's limit as the join's does, and the server refuses exactly what the document does."""
    from tests.openapi_verdict import _validator

    spec = await (await docs.get("/openapi.json")).json()
    stated = _validator(spec, spec["components"]["schemas"]["OnboardBody"])
    author = await make_key(runtime, org="Acme", name="author")
    doc = await upload_ready(docs, author, MD, "plan.md")
    base = f"/api/tap/{doc['id']}"
    cases = [
        ({"role": "observer", "capabilities": ["vote", "propose"]}, 400),
        ({"role": "observer", "capabilities": ["vote"]}, 400),
        ({"role": "observer", "capabilities": []}, 200),
        ({"role": "contributor", "capabilities": ["vote"]}, 200),
        ({"role": "proposer", "capabilities": ["propose", "vote"]}, 200),
        ({"role": "reviewer", "capabilities": ["vote"]}, 200),
    ]
    for i, (body, status) in enumerate(cases):
        key = await make_key(runtime, org="Acme", name=f"agent-{i}")
        sent = {"agentName": f"Agent {i}", **body}
        assert stated.is_valid(sent) == (status == 200), body
        resp = await docs.post(f"{base}/_onboard", headers=key["headers"], json=sent)
        assert resp.status == status, (body, await resp.text())
        if status == 400:
            problem = await resp.json()
            assert problem["field"] == "capabilities", problem
            assert "role observer may not" in problem["detail"], problem
