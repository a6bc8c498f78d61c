"""The PACT reference CLI 2.0.3 (TailorAU/pact, built by `make pact-cli`) against both apps: each command an
agent uses, run as a subprocess against the app under test, checked on its printed output and on the
server's state afterwards. A document is worked on with service keys, a hub topic with agent keys."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

from tests.axiom_helpers import staff_headers
from tests.consensus_helpers import open_topic, propose
from tests.documents_support import make_key, upload_ready
from tests.pact_cli import PactCli, base_url, pact_cli

PLAN = b"# Intro\n\nHello.\n\n# Budget\n\nTen dollars.\n"
REGISTRATION = re.compile(r"^\s*Registration ID:\s+(\S+)$", re.MULTILINE)


# ---- documents (service keys) -------------------------------------------------------------------------


class Doc:
    """A converted document on the document API with two service keys of its organisation; `ada` joined
    through HTTP unless the test joins through the CLI."""

    def __init__(self, docs: Any, cli: PactCli, doc_id: str, ada: dict, bob: dict) -> None:
        self.docs = docs
        self.cli = cli
        self.id = doc_id
        self.ada = ada
        self.bob = bob
        self.base = base_url(docs)

    async def pact(self, *args: str, key: dict | None = None) -> Any:
        return await self.cli.ok(self.base, (key or self.ada)["apiKey"], *args)

    async def get(self, what: str, key: dict | None = None) -> Any:
        resp = await self.docs.get(f"/api/tap/{self.id}/{what}", headers=(key or self.ada)["headers"])
        assert resp.status == 200, await resp.text()
        return await resp.json()

    async def join(self, key: dict, name: str, role: str = "editor") -> dict:
        resp = await self.docs.post(
            f"/api/tap/{self.id}/join", headers=key["headers"], json={"agentName": name, "role": role}
        )
        assert resp.status == 201, await resp.text()
        return await resp.json()


async def _doc(docs: Any, runtime: Any, tmp_path: Path, *, joined: bool = True) -> Doc:
    cli = pact_cli(tmp_path)  # skips here, before any work, when the CLI is not built
    org = f"Org {uuid.uuid4().hex[:6]}"
    ada = await make_key(runtime, org=org, name="ada")
    bob = await make_key(runtime, org=org, name="bob")
    made = await upload_ready(docs, ada, PLAN, "plan.md")
    doc = Doc(docs, cli, made["id"], ada, bob)
    if joined:
        await doc.join(ada, "ada")
    return doc


async def test_join_and_leave_a_document(docs, runtime, tmp_path):
    doc = await _doc(docs, runtime, tmp_path, joined=False)
    joined = await doc.pact("join", doc.id, "--as", "ada")
    assert joined.lines()[0] == f'Joined document {doc.id} as "ada"'
    [registration] = REGISTRATION.findall(joined.out)
    bob = await doc.pact("join", doc.id, "--as", "bob", "--role", "reviewer", key=doc.bob)
    [bob_registration] = REGISTRATION.findall(bob.out)
    agents = {a["agentId"]: a for a in (await doc.get("agents"))["agents"]}
    assert (agents[registration]["agentName"], agents[registration]["role"]) == ("ada", "editor")
    assert (agents[bob_registration]["agentName"], agents[bob_registration]["role"]) == ("bob", "reviewer")
    assert all(a["isActive"] for a in agents.values())

    again = await doc.cli.run(doc.base, doc.ada["apiKey"], "join", doc.id, "--as", "ada")
    assert again.code == 1
    assert "HTTP 409" in again.err  # a key joins a document once

    left = await doc.pact("leave", doc.id)
    assert left.lines() == [f"Left document {doc.id}."]
    agents = {a["agentId"]: a for a in (await doc.get("agents", key=doc.bob))["agents"]}
    assert list(agents) == [bob_registration]  # the list holds the active agents
    types = [e["type"] for e in (await doc.get("events?limit=200", key=doc.bob))["events"]]
    assert types[-1] == "pact.agent.left"


async def test_intent_constrain_and_salience_on_a_document(docs, runtime, tmp_path):
    doc = await _doc(docs, runtime, tmp_path)
    intent = await doc.pact("intent", doc.id, "--section", "sec:budget", "--goal", "Raise the budget")
    [intent_id] = re.findall(r"^Intent declared: (\S+)$", intent.out, re.MULTILINE)
    [stored] = (await doc.get("intents"))["intents"]
    assert (stored["intentId"], stored["sectionId"], stored["goal"], stored["agentName"]) == (
        intent_id,
        "sec:budget",
        "Raise the budget",
        "ada",
    )

    constraint = await doc.pact(
        "constrain", doc.id, "--section", "sec:budget", "--boundary", "Stay under twenty dollars"
    )
    [constraint_id] = re.findall(r"^Constraint published: (\S+)$", constraint.out, re.MULTILINE)
    [stored] = (await doc.get("constraints"))["constraints"]
    assert (stored["constraintId"], stored["boundary"]) == (constraint_id, "Stay under twenty dollars")

    salience = await doc.pact("salience", doc.id, "--section", "sec:budget", "--score", "7")
    assert salience.lines() == ["Salience set: section sec:budget → 7"]
    entries = (await doc.get("salience"))["entries"]
    assert [(e["agentName"], e["sectionId"], e["score"]) for e in entries] == [("ada", "sec:budget", 7)]

    # The CLI reads --score as a float: 7.5 is sent as such and refused as a salience score (integers 0-10).
    refused = await doc.cli.run(
        doc.base, doc.ada["apiKey"], "salience", doc.id, "--section", "sec:budget", "--score", "7.5"
    )
    assert refused.code == 1
    assert "HTTP 400" in refused.err


async def test_object_to_a_document_proposal(docs, runtime, tmp_path):
    doc = await _doc(docs, runtime, tmp_path)
    await doc.join(doc.bob, "bob")
    resp = await docs.post(
        f"/api/tap/{doc.id}/proposals",
        headers=doc.bob["headers"],
        json={"sectionId": "sec:budget", "content": "A hundred dollars.", "summary": "More"},
    )
    assert resp.status == 201, await resp.text()
    proposal_id = (await resp.json())["proposalId"]
    objected = await doc.pact("object", proposal_id, "--doc", doc.id, "--reason", "Over the limit")
    assert objected.lines() == [f"Objection raised against proposal {proposal_id}."]
    [stored] = (await doc.get("proposals"))["proposals"]
    assert (stored["proposalId"], stored["status"]) == (proposal_id, "objected")


async def test_poll_a_document(docs, runtime, tmp_path):
    doc = await _doc(docs, runtime, tmp_path)
    await doc.pact("intent", doc.id, "--section", "sec:budget", "--goal", "Raise it")
    polled = await doc.pact("poll", doc.id)
    events = (await doc.get("events?limit=200"))["events"]
    expected = []
    for e in events:
        section = f"({e['sectionId']})" if e.get("sectionId") else ""
        expected.append(
            f"[{e['type']}] {e['actorDisplay']} {section} — cursor: {e['eventId']}".replace("  ", " ")
        )
    printed = [line.replace("  ", " ") for line in polled.lines()]
    assert printed[:-1] == expected
    assert printed[-1] == f"Cursor: {events[-1]['eventId']}"
    assert events[-1]["type"] == "pact.intent.declared"

    later = await doc.pact("poll", doc.id, "--since", events[-1]["eventId"])
    assert later.lines() == ["No new events.", f"Cursor: {events[-1]['eventId']}"]
    await doc.pact("salience", doc.id, "--section", "sec:intro", "--score", "3")
    since = await doc.pact("poll", doc.id, "--since", events[-2]["eventId"], "--section", "sec:intro")
    assert [line.split("]")[0] for line in since.lines()[:-1]] == ["[pact.salience.set"]


async def test_lock_and_unlock_a_document_section(docs, runtime, tmp_path):
    doc = await _doc(docs, runtime, tmp_path)
    await doc.join(doc.bob, "bob")
    locked = await doc.pact("lock", doc.id, "--section", "sec:budget", "--ttl", "30")
    [expires] = re.findall(r"^Locked section sec:budget \(expires: (\S+)\)\.$", locked.out, re.MULTILINE)
    resp = await docs.post(f"/api/tap/{doc.id}/sections/sec:budget/lock", headers=doc.bob["headers"])
    assert resp.status == 409  # held by ada
    conflict = await resp.json()
    assert (conflict["code"], conflict["expiresAt"]) == ("section.locked", expires)

    unlocked = await doc.pact("unlock", doc.id, "--section", "sec:budget")
    assert unlocked.lines() == ["Unlocked section sec:budget."]
    resp = await docs.post(f"/api/tap/{doc.id}/sections/sec:budget/lock", headers=doc.bob["headers"])
    assert resp.status == 200, await resp.text()
    types = [e["type"] for e in (await doc.get("events?limit=200"))["events"]]
    assert types[-3:] == ["pact.section.locked", "pact.section.unlocked", "pact.section.locked"]


async def test_escalate_a_document(docs, hub, runtime, tmp_path):
    doc = await _doc(docs, runtime, tmp_path)
    reviewer = await staff_headers(runtime, name="Reviewer", roles=("reviewer",))
    escalated = await doc.pact(
        "escalate", doc.id, "--reason", "Is this budget legal?", "--section", "sec:budget"
    )
    assert escalated.lines() == [f"Escalation created for document {doc.id}."]
    resp = await hub.get("/api/review/escalations", params={"source": "document"}, headers=reviewer)
    assert resp.status == 200, await resp.text()
    [raised] = [e for e in (await resp.json())["escalations"] if e["resourceId"] == doc.id]
    assert (raised["question"], raised["sectionId"], raised["status"]) == (
        "Is this budget legal?",
        "sec:budget",
        "open",
    )


async def test_profile_of_the_document_api(docs, runtime, tmp_path):
    cli = pact_cli(tmp_path)
    checked = await cli.ok(base_url(docs), None, "profile", base_url(docs), "--check", "core")
    assert checked.lines()[0].endswith("— conformance: core")
    assert "    • document" in checked.lines()
    assert checked.lines()[-1] == "✓ meets minimum conformance level 'core'"
    higher = await cli.run(base_url(docs), None, "profile", base_url(docs), "--check", "extended")
    assert higher.code == 1
    assert "does not meet minimum 'extended'" in higher.err


async def test_agents_of_a_document(docs, runtime, tmp_path):
    doc = await _doc(docs, runtime, tmp_path)
    await doc.join(doc.bob, "bob", role="reviewer")
    listed = await doc.pact("agents", doc.id)
    assert sorted(listed.lines()) == ["ada  [editor]  (active)", "bob  [reviewer]  (active)"]


async def test_done_on_a_document(docs, runtime, tmp_path):
    doc = await _doc(docs, runtime, tmp_path)
    done = await doc.pact("done", doc.id, "--status", "aligned", "--summary", "Budget checked")
    assert done.lines() == [f"Done signal sent for document {doc.id} (status: aligned)."]
    resp = await docs.get(f"/api/pact/{doc.id}/completions", headers=doc.ada["headers"])
    assert resp.status == 200, await resp.text()
    assert "Budget checked" in await resp.text()


async def test_ask_a_human_about_a_document(docs, runtime, tmp_path):
    doc = await _doc(docs, runtime, tmp_path)
    asked = await doc.pact("ask", doc.id, "--question", "Which budget year?", "--section", "sec:budget")
    [query_id] = re.findall(r"^Question submitted: (\S+)$", asked.out, re.MULTILINE)
    resp = await docs.get(f"/api/pact/{doc.id}/human-responses", headers=doc.ada["headers"])
    assert resp.status == 200, await resp.text()
    assert query_id in await resp.text()


async def test_transcript_of_a_document(docs, runtime, tmp_path):
    doc = await _doc(docs, runtime, tmp_path)
    transcript = await doc.pact("transcript", doc.id)
    events = (await doc.get("events?limit=200"))["events"]
    assert re.findall(r"\bevt_\d+\b", transcript.out) == [e["eventId"] for e in events]


# ---- hub topics (agent keys) --------------------------------------------------------------------------


class Topic:
    """An open topic with three joined agents (`creator`, `b`, `c`) and a fourth, `dee`, not joined."""

    def __init__(self, hub: Any, cli: PactCli, topic_id: str, agents: list[dict], dee: dict) -> None:
        self.hub = hub
        self.cli = cli
        self.id = topic_id
        self.creator, self.b, self.c = agents
        self.dee = dee
        self.base = base_url(hub)

    async def pact(self, *args: str, key: dict | None = None) -> Any:
        return await self.cli.ok(self.base, (key or self.b)["apiKey"], *args)

    async def get(self, what: str) -> Any:
        resp = await self.hub.get(f"/api/pact/{self.id}/{what}")
        assert resp.status == 200, await resp.text()
        return await resp.json()


async def _topic(hub: Any, register: Any, tmp_path: Path) -> Topic:
    cli = pact_cli(tmp_path)
    topic_id, agents = await open_topic(hub, register)
    return Topic(hub, cli, topic_id, agents, await register())


async def test_join_a_topic(hub, register, tmp_path):
    topic = await _topic(hub, register, tmp_path)
    joined = await topic.pact("join", topic.id, "--as", topic.dee["agentName"], key=topic.dee)
    assert joined.lines()[0] == f'Joined document {topic.id} as "{topic.dee["agentName"]}"'
    assert REGISTRATION.findall(joined.out) == [topic.dee["agentId"]]
    agents = {a["agentId"]: a for a in await topic.get("agents")}
    assert agents[topic.dee["agentId"]]["isActive"] is True
    again = await topic.pact("join", topic.id, "--as", topic.dee["agentName"], key=topic.dee)
    assert REGISTRATION.findall(again.out) == [topic.dee["agentId"]]  # joining a topic is idempotent


async def test_intent_constrain_and_salience_on_a_topic(hub, register, tmp_path):
    topic = await _topic(hub, register, tmp_path)
    intent = await topic.pact("intent", topic.id, "--section", "sec:answer", "--goal", "Cite the Act")
    [intent_id] = re.findall(r"^Intent declared: (\S+)$", intent.out, re.MULTILINE)
    [stored] = (await topic.get("intents"))["intents"]
    assert (stored["id"], stored["sectionId"], stored["goal"]) == (intent_id, "sec:answer", "Cite the Act")

    constraint = await topic.pact(
        "constrain", topic.id, "--section", "sec:answer", "--boundary", "Primary sources"
    )
    [constraint_id] = re.findall(r"^Constraint published: (\S+)$", constraint.out, re.MULTILINE)
    [stored] = (await topic.get("constraints"))["constraints"]
    assert (stored["id"], stored["boundary"]) == (constraint_id, "Primary sources")

    salience = await topic.pact("salience", topic.id, "--section", "sec:answer", "--score", "6")
    assert salience.lines() == ["Salience set: section sec:answer → 6"]
    sections = {s["sectionId"]: s for s in (await topic.get("salience"))["sections"]}
    assert [(s["agentId"], s["score"]) for s in sections["sec:answer"]["scores"]] == [(topic.b["agentId"], 6)]


async def test_object_to_a_topic_proposal(hub, register, tmp_path):
    topic = await _topic(hub, register, tmp_path)
    proposal = await propose(hub, topic.id, topic.creator)
    objected = await topic.pact("object", proposal["id"], "--doc", topic.id, "--reason", "Cite a source")
    assert objected.lines() == [f"Objection raised against proposal {proposal['id']}."]
    stored = await topic.get(f"proposals/{proposal['id']}")
    assert [(v["agentId"], v["vote"]) for v in stored["votes"]] == [(topic.b["agentId"], "object")]


async def test_escalate_a_topic(hub, register, runtime, tmp_path):
    topic = await _topic(hub, register, tmp_path)
    reviewer = await staff_headers(runtime, name="Reviewer", roles=("reviewer",))
    escalated = await topic.pact(
        "escalate", topic.id, "--reason", "Which Act applies?", "--section", "sec:answer"
    )
    assert escalated.lines() == [f"Escalation created for document {topic.id}."]
    resp = await hub.get("/api/review/escalations", params={"source": "topic"}, headers=reviewer)
    assert resp.status == 200, await resp.text()
    [raised] = [e for e in (await resp.json())["escalations"] if e["resourceId"] == topic.id]
    assert (raised["question"], raised["sectionId"], raised["raisedBy"]) == (
        "Which Act applies?",
        "sec:answer",
        topic.b["agentId"],
    )


async def test_done_on_a_topic(hub, register, tmp_path):
    topic = await _topic(hub, register, tmp_path)
    done = await topic.pact("done", topic.id, "--status", "aligned", "--summary", "Answer checked")
    assert done.lines() == [f"Done signal sent for document {topic.id} (status: aligned)."]
    agents = {a["agentId"]: a for a in await topic.get("agents")}
    assert (agents[topic.b["agentId"]]["doneStatus"], agents[topic.b["agentId"]]["doneSummary"]) == (
        "aligned",
        "Answer checked",
    )


async def test_profile_of_the_hub(hub, tmp_path):
    cli = pact_cli(tmp_path)
    checked = await cli.ok(base_url(hub), None, "profile", base_url(hub), "--check", "core")
    assert checked.lines()[0].endswith("— conformance: core")
    assert "    • fact" in checked.lines()
    assert checked.lines()[-1] == "✓ meets minimum conformance level 'core'"


async def test_leave_a_topic(hub, register, tmp_path):
    topic = await _topic(hub, register, tmp_path)
    left = await topic.pact("leave", topic.id)
    assert left.lines() == [f"Left document {topic.id}."]
    agents = {a["agentId"]: a for a in await topic.get("agents")}
    assert not agents.get(topic.b["agentId"], {}).get("isActive")


async def test_poll_a_topic(hub, register, tmp_path):
    topic = await _topic(hub, register, tmp_path)
    polled = await topic.pact("poll", topic.id)
    events = (await topic.get("events?limit=200"))["events"]
    assert polled.lines()[-1] == f"Cursor: {events[-1]['eventId']}"
    assert len(polled.lines()) == len(events) + 1


async def test_lock_and_unlock_a_topic_section(hub, register, tmp_path):
    topic = await _topic(hub, register, tmp_path)
    locked = await topic.pact("lock", topic.id, "--section", "sec:answer", "--ttl", "30")
    assert locked.lines()[0].startswith("Locked section sec:answer (expires: ")
    unlocked = await topic.pact("unlock", topic.id, "--section", "sec:answer")
    assert unlocked.lines() == ["Unlocked section sec:answer."]
    types = [e["type"] for e in (await topic.get("events?limit=200"))["events"]]
    assert types[-2:] == ["pact.section.locked", "pact.section.unlocked"]


async def test_agents_of_a_topic(hub, register, tmp_path):
    topic = await _topic(hub, register, tmp_path)
    listed = await topic.pact("agents", topic.id)
    names = {a["agentName"] for a in (topic.creator, topic.b, topic.c)}
    assert {line.split("  ")[0] for line in listed.lines()} == names


async def test_ask_a_human_about_a_topic(hub, register, tmp_path):
    topic = await _topic(hub, register, tmp_path)
    asked = await topic.pact("ask", topic.id, "--question", "Which year?", "--section", "sec:answer")
    [query_id] = re.findall(r"^Question submitted: (\S+)$", asked.out, re.MULTILINE)
    resp = await hub.get(f"/api/pact/{topic.id}/human-responses", headers=topic.b["headers"])
    assert resp.status == 200, await resp.text()
    assert query_id in await resp.text()


async def test_transcript_of_a_topic(hub, register, tmp_path):
    topic = await _topic(hub, register, tmp_path)
    transcript = await topic.pact("transcript", topic.id)
    events = (await topic.get("events?limit=200"))["events"]
    assert re.findall(r"\bevt_\d+\b", transcript.out) == [e["eventId"] for e in events]


# ---- the session layer (issue 31: onboard, status, manifest, where, transcript --mark-read) -------------


def _constraints(tmp_path: Path, section: str) -> Path:
    """The file `pact onboard --constraints` reads: one constraint on `section`."""
    path = tmp_path / "constraints.json"
    path.write_text(json.dumps([{"sectionId": section, "boundary": "Name no instrument"}]))
    return path


async def _session_commands(cli_owner: Any, fabric: str, constraints: Path) -> None:
    """What an agent runs on a resource it is not a member of yet, checked on the CLI's output (the
    server's state is checked by each caller)."""
    onboarded = await cli_owner("onboard", fabric, "--constraints", str(constraints))
    assert onboarded.lines()[0] == f"✓ onboarded into fabric {fabric}"
    assert "Declared constraints: 1" in onboarded.out
    status = await cli_owner("status", fabric)
    assert status.lines()[0] == f"Fabric {fabric}"
    assert re.search(r"^\s+Members:\s+\d+$", status.out, re.MULTILINE)
    manifest = await cli_owner("manifest", fabric)
    assert manifest.lines()[0] == f"Manifest for fabric {fabric}"
    assert re.search(r"^\s+Pending obligations:\s+\d+$", manifest.out, re.MULTILINE)
    where = await cli_owner("where")
    assert f"• {fabric}" in where.out
    read = await cli_owner("transcript", fabric, "--mark-read")
    assert re.search(r"✓ marked \d+ event\(s\) read on server\.", read.out)


async def test_session_commands_on_a_document(docs, runtime, tmp_path):
    doc = await _doc(docs, runtime, tmp_path, joined=False)
    await doc.join(doc.bob, "bob")
    await _session_commands(lambda *a: doc.pact(*a), doc.id, _constraints(tmp_path, "sec:budget"))
    agents = {a["agentName"]: a for a in (await doc.get("agents"))["agents"]}
    assert set(agents) == {"ada", "bob"}  # onboarding joined ada under her key's name
    [constraint] = (await doc.get("constraints"))["constraints"]
    assert (constraint["sectionId"], constraint["boundary"]) == ("sec:budget", "Name no instrument")
    types = [e["type"] for e in (await doc.get("events?limit=200"))["events"]]
    assert {"pact.fabric.onboarded", "pact.agent.mark-read"} <= set(types)


async def test_session_commands_on_a_topic(hub, register, tmp_path):
    topic = await _topic(hub, register, tmp_path)
    await _session_commands(
        lambda *a: topic.pact(*a, key=topic.dee), topic.id, _constraints(tmp_path, "sec:answer")
    )
    agents = {a["agentId"]: a for a in await topic.get("agents")}
    assert agents[topic.dee["agentId"]]["isActive"] is True
    constraints = (await topic.get("constraints"))["constraints"]
    assert [(c["sectionId"], c["boundary"]) for c in constraints] == [("sec:answer", "Name no instrument")]
    types = [e["type"] for e in (await topic.get("events?limit=200"))["events"]]
    assert {"pact.fabric.onboarded", "pact.agent.mark-read"} <= set(types)
