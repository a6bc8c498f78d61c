"""Principals, roles and contacts in PACT sessions (§4.4, §15.4, §17.13), over HTTP on both apps: a key an
operator minted for a DID acts for it (principal_id in `_status`, `manifest` and the obligation events); two
members of one organisation acting for DIDs of different registrable domains are cross-org to each other; the
contact a member gives is shown to itself and its organisation, never across; the PACT role it declares is
what the manifests show; `/done` and a vote answer PACT's fields; a merge supersedes an objected rival."""

from __future__ import annotations

import subprocess
from typing import Any

from tests.consensus_helpers import open_topic
from tests.documents_support import make_key, upload_ready
from tests.processes import command

MD = b"# Terms\n\nPay in 30 days.\n\n## Fees\n\nNone.\n"
ALICE = "did:web:alice.org-a.example"
ALICE_OPS = "did:web:org-a.example"  # the same registrable domain as ALICE
BOB = "did:web:org-b.example"


async def _call(client: Any, method: str, url: str, key: dict, body: Any = None, expect: int = 200) -> Any:
    resp = await client.request(method, url, headers=key["headers"], json=body)
    assert resp.status == expect, await resp.text()
    return await resp.json()


async def _three_principals(docs: Any, runtime: Any) -> tuple[str, list[dict], list[dict]]:
    """A document of one organisation whose three keys act for ALICE, ALICE_OPS and BOB, all joined, each
    with a contact."""
    keys = [
        await make_key(runtime, org="Principals Co", name=f"k{i}", principal=p)
        for i, p in enumerate((ALICE, ALICE_OPS, BOB))
    ]
    doc = await upload_ready(docs, keys[0], MD, "terms.md")
    base = f"/api/pact/{doc['id']}"
    joined = []
    for i, key in enumerate(keys):
        contact = {"email": f"ops{i}@example.org", "escalation_hook": f"https://alerts.example.org/{i}"}
        body = {"agentName": f"agent-{i}", "role": "editor", "contact": contact}
        joined.append(await _call(docs, "POST", f"{base}/join", key, body, 201))
    return base, keys, joined


async def test_a_keys_principal_is_its_agents_and_decides_who_is_cross_org(docs, runtime):
    base, keys, joined = await _three_principals(docs, runtime)
    status = await _call(docs, "GET", f"{base}/_status", keys[0])
    by_principal = status["members_by_principal"]
    assert set(by_principal) == {ALICE, ALICE_OPS, BOB}
    assert (by_principal[ALICE_OPS]["cross_org"], by_principal[BOB]["cross_org"]) == (False, True)
    assert "agent_name" not in by_principal[BOB]  # elided across organisations, display_name stays
    assert by_principal[BOB]["display_name"] == "agent-2"

    manifest = await _call(docs, "GET", f"{base}/manifest", keys[0])
    me = manifest["caller"]
    assert (me["principal_id"], me["role"], me["resource_role"]) == (ALICE, "contributor", "editor")
    assert me["contact"] == {"email": "ops0@example.org", "escalation_hook": "https://alerts.example.org/0"}
    peers = manifest["counterparties_by_principal"]
    assert peers[ALICE_OPS]["contact_visible"] is True
    assert peers[ALICE_OPS]["contact"]["email"] == "ops1@example.org"
    assert (peers[BOB]["contact_visible"], peers[BOB]["cross_org"]) == (False, True)
    assert "contact" not in peers[BOB]
    assert "agent_name" not in peers[BOB]
    assert peers[BOB]["constraints_summary"] == {"count": 0}

    # BOB sees both of the others as cross-org, and neither contact.
    theirs = await _call(docs, "GET", f"{base}/manifest", keys[2])
    assert {p["principal_id"]: p["cross_org"] for p in theirs["counterparties"]} == {
        ALICE: True,
        ALICE_OPS: True,
    }
    assert all("contact" not in p for p in theirs["counterparties"])

    # A vote owed by BOB is an obligation event naming BOB's DID.
    made = await _call(
        docs,
        "POST",
        f"{base}/proposals",
        keys[0],
        {"sectionId": "sec:terms", "content": "Pay in 7 days.", "summary": "Sooner"},
        201,
    )
    events = (await _call(docs, "GET", f"{base}/events?limit=200", keys[0]))["events"]
    created = [e for e in events if e["type"] == "pact.obligation.created"]
    assert {e["data"]["principalId"] for e in created} == {ALICE_OPS, BOB}
    vote = await _call(
        docs, "POST", f"{base}/proposals/{made['proposalId']}/reject", keys[2], {"reason": "No"}
    )
    assert (vote["recorded"], vote["decision"], vote["vote"]) == (True, "reject", "reject")


async def test_a_key_without_a_principal_is_its_own(docs, runtime):
    key = await make_key(runtime, org="Plain Co", name="plain")
    doc = await upload_ready(docs, key, MD, "terms.md")
    base = f"/api/pact/{doc['id']}"
    joined = await _call(docs, "POST", f"{base}/join", key, {"agentName": "plain"}, 201)
    me = (await _call(docs, "GET", f"{base}/manifest", key))["caller"]
    assert me["principal_id"] == f"urn:concord:agent:{joined['agentId']}"
    assert "contact" not in me


async def test_contact_is_checked_and_refused_with_its_field(docs, runtime):
    key = await make_key(runtime, org="Checked Co", name="checked")
    doc = await upload_ready(docs, key, MD, "terms.md")
    base = f"/api/pact/{doc['id']}"
    for contact, field in (
        ({"email": "not an address"}, "email"),
        ({"escalation_hook": "http://alerts.example.org/"}, "escalation_hook"),
        ({"escalation_hook": "javascript:alert(1)"}, "escalation_hook"),
    ):
        for path, body in (
            ("join", {"agentName": "x", "contact": contact}),
            ("_onboard", {"agentName": "x", "contact": contact}),
        ):
            refused = await _call(docs, "POST", f"{base}/{path}", key, body, 400)
            assert field in refused["detail"], refused
    agents = await _call(docs, "GET", f"{base}/agents", key)
    assert agents == []  # nothing joined on a refusal


async def test_operators_attest_a_principal_when_minting_a_key(tmp_path):
    env = {"CONCORD_DATA_DIR": str(tmp_path), "CONCORD_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/c.db"}
    run = subprocess.run(
        [command("concord"), "migrate"], env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    made = subprocess.run(
        [command("concord"), "keys", "create", "--org", "Ops", "--principal", "did:web:ops.example"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip().startswith("svc_sk_")
    listed = subprocess.run(
        [command("concord"), "keys", "list"], env=env, capture_output=True, text=True, timeout=60
    )
    assert '"principal": "did:web:ops.example"' in listed.stdout
    bad = subprocess.run(
        [command("concord"), "keys", "create", "--org", "Ops", "--principal", "ops.example"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode != 0
    assert "principal must be a DID" in bad.stderr


async def test_done_answers_the_principal_and_the_phase(docs, runtime):
    base, keys, _joined = await _three_principals(docs, runtime)
    done = await _call(docs, "POST", f"{base}/done", keys[2], {"status": "aligned"})
    assert (done["fabric_id"], done["principal_id"], done["done"], done["phase"]) == (
        base.rsplit("/", 1)[1],
        BOB,
        True,
        "forming",
    )


async def test_a_merge_supersedes_an_objected_rival_and_the_resource_converges(docs, runtime):
    """An objected proposal waits for a person; once a rival on its section merges, there is nothing left to
    decide (a reviewer's approval would put back text the merge replaced): it is superseded."""
    base, keys, _joined = await _three_principals(docs, runtime)
    strict = await _call(
        docs,
        "POST",
        f"{base}/proposals",
        keys[0],
        {"sectionId": "sec:terms", "content": "Pay in 7 days.", "summary": "Net-7"},
        201,
    )
    objected = await _call(
        docs, "POST", f"{base}/proposals/{strict['proposalId']}/object", keys[2], {"reason": "Too tight"}
    )
    assert objected["status"] == "objected"
    assert (await _call(docs, "GET", f"{base}/_status", keys[0]))["phase"] == "escalated"
    compromise = await _call(
        docs,
        "POST",
        f"{base}/proposals",
        keys[2],
        {"sectionId": "sec:terms", "content": "Pay in 21 days.", "summary": "Net-21"},
        201,
    )
    for key in keys[:2]:
        last = await _call(docs, "POST", f"{base}/proposals/{compromise['proposalId']}/approve", key, {})
    assert last["status"] == "approved"
    listed = {
        p["proposalId"]: p["status"]
        for p in (await _call(docs, "GET", f"{base}/proposals", keys[0]))["proposals"]
    }
    assert listed == {strict["proposalId"]: "superseded", compromise["proposalId"]: "approved"}
    done = await _call(docs, "POST", f"{base}/done", keys[0], {"status": "aligned"})
    assert done["phase"] == "converged"
    events = (await _call(docs, "GET", f"{base}/events?limit=200", keys[0]))["events"]
    superseded = [e for e in events if e["type"] == "pact.proposal.superseded"]
    assert [e["data"]["proposalId"] for e in superseded] == [strict["proposalId"]]


async def test_hub_onboarding_takes_pacts_roles_and_a_contact(hub, register):
    topic_id, _agents = await open_topic(hub, register, n_agents=2)
    newcomer = await register()
    base = f"/api/pact/{topic_id}"
    refused = await _call(hub, "POST", f"{base}/_onboard", newcomer, {"role": "overlord"}, 400)
    assert "role" in refused["detail"]
    body = {"role": "proposer", "contact": {"email": "bot-ops@example.org"}}
    done = await _call(hub, "POST", f"{base}/_onboard", newcomer, body)
    assert done["role"] == "proposer"
    me = (await _call(hub, "GET", f"{base}/manifest", newcomer))["caller"]
    assert (me["role"], me["contact"]) == ("proposer", {"email": "bot-ops@example.org"})
    assert me["principal_id"] == f"urn:concord:agent:{newcomer['agentId']}"
