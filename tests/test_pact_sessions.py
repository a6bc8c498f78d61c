"""PACT v2.0.3 session awareness (§4.4, §6.5, §15.6, §17.13) on both apps, over HTTP: `_status`, `manifest`,
`_heartbeat`, `mark-read`, `_onboard`, and vote obligations created and discharged with their events
(SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from tests.consensus_helpers import expire_now, open_topic, propose, run_sweep, vote
from tests.documents_support import make_key, upload_ready

MD = b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n\n## Risks\n\nMany.\n"


async def _events(client: Any, base: str, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    resp = await client.get(f"{base}/events", params={"limit": "200"}, headers=headers or {})
    assert resp.status == 200, await resp.text()
    return list((await resp.json())["events"])


def _types(found: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in found]


async def _get(client: Any, url: str, headers: dict[str, str], expect: int = 200, **params: str) -> Any:
    resp = await client.get(url, headers=headers, params=params)
    assert resp.status == expect, await resp.text()
    return await resp.json()


async def _post(client: Any, url: str, headers: dict[str, str], body: Any, expect: int = 200) -> Any:
    resp = await client.post(url, headers=headers, json=body)
    assert resp.status == expect, await resp.text()
    return await resp.json()


async def _document(docs: Any, runtime: Any, roles: tuple[str, ...]) -> tuple[list[dict], str]:
    """A ready document of one organisation, and one key per role (the first uploaded it); none joined."""
    keys = [await make_key(runtime, org="Acme", name=f"k{i}") for i in range(len(roles))]
    doc = await upload_ready(docs, keys[0], MD, "plan.md")
    return keys, f"/api/pact/{doc['id']}"


async def _join(docs: Any, key: dict, base: str, name: str, role: str) -> dict[str, Any]:
    return dict(await _post(docs, f"{base}/join", key["headers"], {"agentName": name, "role": role}, 201))


# ---- obligations ---------------------------------------------------------------------------------------


async def test_document_vote_obligations_are_created_and_discharged_with_their_events(docs, runtime):
    keys, base = await _document(docs, runtime, ("editor", "reviewer", "reviewer"))
    agents = [
        await _join(docs, k, base, f"agent{i}", r)
        for i, (k, r) in enumerate(zip(keys, ("editor", "reviewer", "reviewer"), strict=True))
    ]
    status = await _get(docs, f"{base}/_status", keys[0]["headers"])
    assert status["phase"] == "forming"
    assert status["pending_obligations"] == []

    made = await _post(
        docs,
        f"{base}/proposals",
        keys[0]["headers"],
        {"sectionId": "sec:plan:budget", "content": "More.", "summary": "s"},
        201,
    )
    pid = made["proposalId"]
    status = await _get(docs, f"{base}/_status", keys[0]["headers"])
    assert status["phase"] == "negotiating"
    assert status["open_proposals"] == 1
    owed = {o["member_id"]: o for o in status["pending_obligations"]}
    assert set(owed) == {agents[1]["agentId"], agents[2]["agentId"]}  # the author owes no vote
    assert {o["kind"] for o in owed.values()} == {"vote"}

    mine = await _get(docs, f"{base}/manifest", keys[1]["headers"])
    entry = mine["caller"]["obligations_by_ref"][pid]
    assert (entry["kind"], entry["event_ref"], entry["status"]) == ("vote", pid, "pending")
    assert datetime.fromisoformat(entry["due_by"]) == datetime.fromisoformat(made["expiresAt"])
    assert entry["due_by"].endswith("Z")  # PACT writes its times so
    assert mine["obligations_by_ref"] == mine["caller"]["obligations_by_ref"]
    assert [o["id"] for o in mine["pending_obligations"]] == [entry["id"]]

    await _post(docs, f"{base}/proposals/{pid}/approve", keys[1]["headers"], None)
    mine = await _get(docs, f"{base}/manifest", keys[1]["headers"])
    assert mine["pending_obligations"] == []
    assert mine["caller"]["obligations_by_ref"] == {}
    other = await _get(docs, f"{base}/manifest", keys[2]["headers"])
    assert list(other["caller"]["obligations_by_ref"]) == [pid]

    await _post(docs, f"{base}/proposals/{pid}/approve", keys[2]["headers"], None)  # the second merges
    status = await _get(docs, f"{base}/_status", keys[0]["headers"])
    assert status["pending_obligations"] == []
    assert status["phase"] == "converged"

    found = await _events(docs, base, keys[0]["headers"])
    created = [e for e in found if e["type"] == "pact.obligation.created"]
    discharged = [e for e in found if e["type"] == "pact.obligation.discharged"]
    assert len(created) == 2
    assert len(discharged) == 2
    for e in created + discharged:
        assert e["actorKind"] == "System"
        assert e["inResponseTo"] == pid
    assert {e["correlationId"] for e in created} == {e["correlationId"] for e in discharged}
    assert {e["data"]["discharge_kind"] for e in discharged} == {"fulfilled"}
    assert {e["data"]["obligation"]["event_ref"] for e in discharged} == {pid}
    assert {e["data"]["principalId"] for e in discharged} == {
        f"urn:concord:agent:{agents[1]['agentId']}",
        f"urn:concord:agent:{agents[2]['agentId']}",
    }
    order = _types(found)
    assert order.index("pact.proposal.vote.approve") < order.index("pact.obligation.discharged")


async def test_topic_obligations_end_with_the_proposal_merged_superseded_or_expired(hub, register, runtime):
    topic_id, agents = await open_topic(hub, register, n_agents=3)
    base = f"/api/pact/{topic_id}"
    first = await propose(hub, topic_id, agents[0], newContent="First.")
    rival = await propose(hub, topic_id, agents[1], newContent="Rival.")
    status = await _get(hub, f"{base}/_status", agents[0]["headers"])
    assert Counter(o["event_ref"] for o in status["pending_obligations"]) == {first["id"]: 2, rival["id"]: 2}

    await vote(hub, topic_id, first["id"], agents[1], "approve")
    await vote(hub, topic_id, first["id"], agents[2], "approve")  # merged: the rival is superseded
    status = await _get(hub, f"{base}/_status", agents[0]["headers"])
    assert status["pending_obligations"] == []
    kinds = Counter(
        (e["data"]["event_ref"], e["data"]["discharge_kind"])
        for e in await _events(hub, base)
        if e["type"] == "pact.obligation.discharged"
    )
    assert kinds == {(first["id"], "fulfilled"): 2, (rival["id"], "superseded"): 2}

    late = await propose(hub, topic_id, agents[2], newContent="Late.")
    await expire_now(runtime, late["id"])
    assert await run_sweep(runtime, "topics.expire_proposals") == 1
    found = [e for e in await _events(hub, base) if e["type"] == "pact.obligation.discharged"]
    assert Counter(e["data"]["discharge_kind"] for e in found if e["data"]["event_ref"] == late["id"]) == {
        "timed_out": 2
    }
    assert (await _get(hub, f"{base}/_status", agents[0]["headers"]))["pending_obligations"] == []


async def test_a_withdrawn_proposal_discharges_the_votes_owed_on_it(hub, register):
    """PACT §6.5: what the members owed on a proposal ends with it when its author withdraws it; each owing
    member's manifest no longer lists it, and each discharge is an event naming the proposal."""
    topic_id, agents = await open_topic(hub, register, n_agents=3)
    base = f"/api/pact/{topic_id}"
    dropped = await propose(hub, topic_id, agents[0], newContent="Never mind.")
    owed = (await _get(hub, f"{base}/manifest", agents[1]["headers"]))["caller"]["obligations_by_ref"]
    assert owed[dropped["id"]]["kind"] == "vote"
    resp = await hub.delete(f"{base}/proposals/{dropped['id']}", headers=agents[0]["headers"])
    assert resp.status == 200, await resp.text()
    for agent in agents[1:]:
        manifest = await _get(hub, f"{base}/manifest", agent["headers"])
        assert dropped["id"] not in manifest["caller"]["obligations_by_ref"]
    found = [
        e["data"]
        for e in await _events(hub, base)
        if e["type"] == "pact.obligation.discharged" and e["data"]["event_ref"] == dropped["id"]
    ]
    assert sorted(d["discharge_kind"] for d in found) == ["superseded", "superseded"]


async def test_racing_votes_discharge_every_obligation_once(hub, register):
    topic_id, agents = await open_topic(hub, register, n_agents=9, approvalPolicy="majority")
    made = await propose(hub, topic_id, agents[0], newContent="Merged once.")
    url = f"/api/pact/{topic_id}/proposals/{made['id']}"

    async def approve(agent: dict) -> int:
        resp = await hub.post(f"{url}/approve", headers=agent["headers"])
        await resp.read()
        return resp.status

    statuses = await asyncio.gather(*(approve(a) for a in agents[1:]))
    assert Counter(statuses) == {200: 5, 409: 3}
    found = [
        e for e in await _events(hub, f"/api/pact/{topic_id}") if e["type"] == "pact.obligation.discharged"
    ]
    assert len(found) == 8
    assert len({e["data"]["id"] for e in found}) == 8
    assert Counter(e["data"]["discharge_kind"] for e in found) == {"fulfilled": 5, "superseded": 3}


# ---- onboarding ----------------------------------------------------------------------------------------


async def test_document_onboard_joins_and_publishes_in_one_event(docs, runtime):
    keys, base = await _document(docs, runtime, ("editor",))
    body = {
        "agentName": "Finance",
        "role": "editor",
        "constraints": [
            {"sectionId": "sec:plan:risks", "boundary": "No instruments named", "category": "regulatory"},
            {"sectionId": "sec:plan:budget", "boundary": "Within Q3", "type": "must"},
        ],
    }
    done = await _post(docs, f"{base}/_onboard", keys[0]["headers"], body)
    assert (done["status"], done["role"], done["membership_status"]) == ("onboarded", "editor", "onboarded")
    assert [(c["sectionId"], c["boundary"]) for c in done["accepted_constraints"]] == [
        ("sec:plan:risks", "No instruments named"),
        ("sec:plan:budget", "Within Q3"),
    ]
    assert done["registration"]["agentName"] == "Finance"
    assert done["membership_id"] == done["registration"]["agentId"]
    found = await _events(docs, base, keys[0]["headers"])
    assert "pact.agent.joined" not in _types(found)
    onboarded = next(e for e in found if e["type"] == "pact.fabric.onboarded")
    assert onboarded["eventId"] == done["onboarded_event_id"]
    assert onboarded["data"]["constraintIds"] == [c["constraint_id"] for c in done["constraints"]]
    published = [e for e in found if e["type"] == "pact.constraint.published"]
    assert [e["correlationId"] for e in published] == [done["onboarded_event_id"]] * 2
    manifest = await _get(docs, f"{base}/manifest", keys[0]["headers"])
    assert {c["section_id"] for c in manifest["constraints_on_caller"]} == {
        "sec:plan:risks",
        "sec:plan:budget",
    }
    assert all(c["published_by_self"] for c in manifest["constraints_on_caller"])
    await _post(docs, f"{base}/_onboard", keys[0]["headers"], {}, 409)  # already a member


async def test_document_onboard_takes_pacts_role_descriptors(docs, runtime):
    """§4.4.5's role is a descriptor: contributor and proposer join as editor, answered as declared."""
    keys, base = await _document(docs, runtime, ("editor", "editor", "editor"))
    for key, role, joined_as in zip(
        keys, ("contributor", "proposer", "observer"), ("editor", "editor", "observer"), strict=True
    ):
        constraints = [] if role == "observer" else [{"sectionId": "sec:plan", "boundary": f"By {role}"}]
        body = {"agentName": role.title(), "role": role, "constraints": constraints}
        done = await _post(docs, f"{base}/_onboard", key["headers"], body)
        assert (done["role"], done["registration"]["role"]) == (role, joined_as)
        assert done["accepted_constraints"] == [
            {"sectionId": c["sectionId"], "boundary": c["boundary"]} for c in constraints
        ]
    found = await _events(docs, base, keys[0]["headers"])
    roles = [e["data"]["role"] for e in found if e["type"] == "pact.fabric.onboarded"]
    assert roles == ["contributor", "proposer", "observer"]
    body = {"agentName": "Nobody", "role": "overlord"}
    refused = await _post(docs, f"{base}/_onboard", keys[0]["headers"], body, 400)
    assert "role" in refused["detail"]


async def test_a_refused_constraint_leaves_no_member_and_no_event(docs, hub, register, runtime):
    keys, base = await _document(docs, runtime, ("editor", "observer"))
    await _join(docs, keys[0], base, "Owner", "editor")
    before = len(await _events(docs, base, keys[0]["headers"]))
    body = {
        "agentName": "Late",
        "constraints": [
            {"sectionId": "sec:plan:risks", "boundary": "Fine"},
            {"sectionId": "sec:plan:nowhere", "boundary": "Refused"},
        ],
    }
    refused = await _post(docs, f"{base}/_onboard", keys[1]["headers"], body, 422)
    assert (refused["status"], refused["fabric_id"]) == ("rejected", base.rsplit("/", 1)[1])
    assert refused["rejection_reason"] == "constraint.invalid"
    assert refused["rejected_constraint_index"] == 1
    assert "sec:plan:nowhere" in refused["detail"]
    assert refused["errors"][0]["code"] == "constraint.invalid"
    observer = {
        "agentName": "Watcher",
        "role": "observer",
        "constraints": [{"sectionId": "sec:plan", "boundary": "x"}],
    }
    refused = await _post(docs, f"{base}/_onboard", keys[1]["headers"], observer, 422)
    assert (refused["code"], refused["rejected_constraint_index"]) == ("constraint.incompatible", 0)
    assert len(await _events(docs, base, keys[0]["headers"])) == before  # nothing recorded
    agents = await _get(docs, f"{base}/agents", keys[0]["headers"])
    assert [a["agentName"] for a in agents] == ["Owner"]
    status = await _get(docs, f"{base}/_status", keys[0]["headers"])
    assert len(status["members"]) == 1
    await _get(docs, f"{base}/_status", keys[1]["headers"], 403)
    # The failure consumed nothing: the same key onboards once its constraints are right.
    body["constraints"] = body["constraints"][:1]
    assert (await _post(docs, f"{base}/_onboard", keys[1]["headers"], body))["status"] == "onboarded"

    topic_id, agents = await open_topic(hub, register, n_agents=3)
    newcomer = await register()
    tbase = f"/api/pact/{topic_id}"
    tbefore = len(await _events(hub, tbase))
    bad = {
        "constraints": [
            {"sectionId": "sec:answer", "boundary": "ok"},
            {"sectionId": "sec:missing", "boundary": "no"},
        ]
    }
    refused = await _post(hub, f"{tbase}/_onboard", newcomer["headers"], bad, 422)
    assert (refused["status"], refused["rejection_reason"], refused["rejected_constraint_index"]) == (
        "rejected",
        "constraint.invalid",
        1,
    )
    assert len(await _events(hub, tbase)) == tbefore
    await _get(hub, f"{tbase}/_status", newcomer["headers"], 403)
    good = await _post(hub, f"{tbase}/_onboard", newcomer["headers"], {"constraints": bad["constraints"][:1]})
    assert good["registration"]["agentId"] == newcomer["agentId"]
    assert good["fabric_id"] == topic_id
    types = _types(await _events(hub, tbase))[tbefore:]
    assert types == ["pact.fabric.onboarded", "pact.constraint.published"]


async def test_racing_onboardings_of_one_key_make_one_member(docs, runtime):
    keys, base = await _document(docs, runtime, ("editor",))

    async def onboard() -> int:
        resp = await docs.post(f"{base}/_onboard", headers=keys[0]["headers"], json={"agentName": "Once"})
        await resp.read()
        return resp.status

    assert Counter(await asyncio.gather(onboard(), onboard(), onboard())) == {200: 1, 409: 2}
    assert len(await _get(docs, f"{base}/agents", keys[0]["headers"])) == 1


# ---- heartbeat and liveness ----------------------------------------------------------------------------


async def test_heartbeat_is_idempotent_and_liveness_goes_stale_without_eviction(hub, register, clock):
    topic_id, agents = await open_topic(hub, register, n_agents=3)
    base = f"/api/pact/{topic_id}"
    beat_id = str(uuid.uuid4())
    first = await _post(hub, f"{base}/_heartbeat", agents[0]["headers"], {"client_heartbeat_id": beat_id})
    assert first["replayed"] is False
    assert first["pending_obligation_count"] == 0
    count = len(await _events(hub, base))
    again = await _post(hub, f"{base}/_heartbeat", agents[0]["headers"], {"client_heartbeat_id": beat_id})
    assert again["replayed"] is True
    assert {k: v for k, v in again.items() if k != "replayed"} == {
        k: v for k, v in first.items() if k != "replayed"
    }
    assert len(await _events(hub, base)) == count  # no second event
    await _post(
        hub,
        f"{base}/_heartbeat",
        agents[1]["headers"],
        {"client_heartbeat_id": beat_id, "attention_required": True},
    )  # the same id from another member is its own heartbeat
    tail = _types(await _events(hub, base))[count:]
    assert tail == ["pact.agent.heartbeat-received", "pact.agent.attention-required"]

    clock.advance(timedelta(seconds=61))
    await _post(hub, f"{base}/_heartbeat", agents[0]["headers"], {"client_heartbeat_id": str(uuid.uuid4())})
    status = await _get(hub, f"{base}/_status", agents[0]["headers"])
    by = status["members_by_principal"]
    assert status["heartbeat_timeout_seconds"] == 60
    assert by[f"urn:concord:agent:{agents[0]['agentId']}"]["liveness"] == "live"
    for stale in agents[1:]:
        member = by[f"urn:concord:agent:{stale['agentId']}"]
        assert (member["liveness"], member["evicted"]) == ("stale", False)
    assert len(status["members"]) == 3  # flagged, never evicted
    light = await _get(hub, f"{base}/_status", agents[0]["headers"], include="activity,latest_event")
    assert "phase" not in light
    assert "pending_obligations" not in light
    assert "agent_name" not in light["members"][0]
    assert light["latest_event_id"] == f"evt_{light['latest_sequence_number']}"
    await _get(hub, f"{base}/_status", agents[0]["headers"], 400, include="members,gossip")


async def test_heartbeat_receipts_are_purged_after_their_window_and_the_id_starts_anew(
    hub, register, runtime, clock
):
    topic_id, agents = await open_topic(hub, register, n_agents=2)
    base = f"/api/pact/{topic_id}"
    old, recent = str(uuid.uuid4()), str(uuid.uuid4())
    await _post(hub, f"{base}/_heartbeat", agents[0]["headers"], {"client_heartbeat_id": old})
    assert (
        await run_sweep(runtime, "pact.purge_heartbeats") == 0
    )  # within the window: it still answers repeats
    clock.advance(timedelta(minutes=9))
    await _post(hub, f"{base}/_heartbeat", agents[1]["headers"], {"client_heartbeat_id": recent})
    clock.advance(timedelta(minutes=2))  # 11 minutes after the first: past twice the 5-minute window
    assert await run_sweep(runtime, "pact.purge_heartbeats") == 1
    assert await run_sweep(runtime, "pact.purge_heartbeats") == 0
    count = len(await _events(hub, base))
    # The purged id is a new heartbeat (a new event); the kept one still replays.
    again = await _post(hub, f"{base}/_heartbeat", agents[0]["headers"], {"client_heartbeat_id": old})
    assert again["replayed"] is False
    kept = await _post(hub, f"{base}/_heartbeat", agents[1]["headers"], {"client_heartbeat_id": recent})
    assert kept["replayed"] is True
    assert _types(await _events(hub, base))[count:] == ["pact.agent.heartbeat-received"]


async def test_racing_repeats_of_one_heartbeat_record_one_event(docs, runtime):
    keys, base = await _document(docs, runtime, ("editor",))
    await _join(docs, keys[0], base, "Beat", "editor")
    before = len(await _events(docs, base, keys[0]["headers"]))
    body = {"client_heartbeat_id": str(uuid.uuid4())}

    async def beat() -> dict[str, Any]:
        return dict(await _post(docs, f"{base}/_heartbeat", keys[0]["headers"], body))

    answers = await asyncio.gather(*(beat() for _ in range(4)))
    assert len({a["server_received_at"] for a in answers}) == 1
    assert Counter(a["replayed"] for a in answers) == {False: 1, True: 3}
    assert len(await _events(docs, base, keys[0]["headers"])) == before + 1


# ---- mark-read -----------------------------------------------------------------------------------------


async def test_mark_read_checks_the_range_and_only_moves_forward(docs, runtime):
    keys, base = await _document(docs, runtime, ("editor", "reviewer"))
    await _join(docs, keys[0], base, "Reader", "editor")
    await _join(docs, keys[1], base, "Other", "reviewer")
    latest = (await _get(docs, f"{base}/_status", keys[0]["headers"]))["latest_sequence_number"]
    url, h = f"{base}/mark-read", keys[0]["headers"]
    assert (await _post(docs, url, h, {"from_event_id": "evt_3", "to_event_id": "evt_2"}, 422))["code"] == (
        "mark-read.invalid_range"
    )
    await _post(docs, url, h, {"from_event_id": "evt_1", "to_event_id": f"evt_{latest + 5}"}, 422)
    await _post(
        docs, url, h, {"from_event_id": "evt_1", "to_event_id": "evt_2", "to_sequence_number": 3}, 422
    )
    await _post(docs, url, h, {"from_event_id": "evt_1"}, 422)
    await _post(docs, url, h, {"from_sequence_number": 1, "from_event_id": None}, 422)
    await _post(docs, url, h, {"from_event_id": "later", "to_event_id": "evt_1"}, 400)
    # The schema says what the check says: a whole range, by ids or by numbers (the fuzzer sent half of one
    # as valid data when it did not).
    spec = await (await docs.get("/openapi.json")).json()
    body = spec["paths"]["/api/tap/{docId}/mark-read"]["post"]["requestBody"]["content"]["application/json"]
    ref = body["schema"]["$ref"].rsplit("/", 1)[-1]
    assert [b["required"] for b in spec["components"]["schemas"][ref]["anyOf"]] == [
        ["from_event_id", "to_event_id"],
        ["from_sequence_number", "to_sequence_number"],
    ]

    first = await _post(docs, url, h, {"from_event_id": "evt_1", "to_event_id": "evt_2"})
    assert (first["marked_from_sequence_number"], first["marked_to_sequence_number"]) == (1, 2)
    same = await _post(docs, url, h, {"from_sequence_number": 1, "to_sequence_number": 2})
    assert same["event_id"] == first["event_id"]
    assert same["merged_with_existing"] is True
    behind = await _post(docs, url, h, {"from_event_id": "1", "to_event_id": "1"})
    assert behind["event_id"] == first["event_id"]
    assert behind["marked_to_sequence_number"] == 2
    found = await _events(docs, base, h)
    assert _types(found).count("pact.agent.mark-read") == 1
    mark = next(e for e in found if e["type"] == "pact.agent.mark-read")
    assert mark["eventId"] == first["event_id"]
    assert mark["data"]["marked_to_sequence_number"] == 2

    further = await _post(docs, url, h, {"from_event_id": "evt_2", "to_event_id": f"evt_{latest}"})
    assert (further["marked_from_sequence_number"], further["marked_to_sequence_number"]) == (1, latest)
    assert further["event_id"] != first["event_id"]
    manifest = await _get(docs, f"{base}/manifest", h)
    assert manifest["caller"]["read_to_sequence_number"] == latest
    assert manifest["unread_event_id_from"] == f"evt_{latest + 1}"  # the mark-read events themselves
    assert manifest["unread_event_id_to"] == manifest["latest_event_id"]
    other = await _get(docs, f"{base}/manifest", keys[1]["headers"])
    assert other["unread_event_id_from"] == "evt_1"
    assert other["unread_count"] == other["latest_sequence_number"]


# ---- manifest disclosure -------------------------------------------------------------------------------


async def test_manifest_reduces_cross_org_counterparties_and_refuses_non_members(
    hub, register, docs, runtime
):
    topic_id, agents = await open_topic(hub, register, n_agents=3)
    base = f"/api/pact/{topic_id}"
    await _post(
        hub,
        f"{base}/constraints",
        agents[1]["headers"],
        {"sectionId": "sec:answer", "boundary": "Cite sources"},
        201,
    )
    made = await propose(hub, topic_id, agents[0])
    manifest = await _get(hub, f"{base}/manifest", agents[0]["headers"])
    assert manifest["caller"]["agent_name"] == agents[0]["agentName"]
    assert manifest["caller"]["principal_id"] == f"urn:concord:agent:{agents[0]['agentId']}"
    peer = manifest["counterparties_by_principal"][f"urn:concord:agent:{agents[1]['agentId']}"]
    assert peer["cross_org"] is True
    assert peer["contact_visible"] is False
    assert peer["display_name"] == agents[1]["agentName"]
    assert "agent_name" not in peer
    assert peer["disclosure_level"] == "category"
    assert peer["constraints_summary"] == {"count": 1}
    assert peer["obligations_summary"] == {"pending_count": 1}
    assert manifest["constraints_on_caller"] == []  # another organisation's constraints are counted only
    status = await _get(hub, f"{base}/_status", agents[0]["headers"])
    # The obligations' events are every member's to read: _status lists them all (the manifest does not).
    assert {o["member_id"] for o in status["pending_obligations"]} == {
        agents[1]["agentId"],
        agents[2]["agentId"],
    }
    assert all("agent_name" not in m for m in status["members"] if m["agent_id"] != agents[0]["agentId"])
    voter = await _get(hub, f"{base}/manifest", agents[1]["headers"])
    assert list(voter["caller"]["obligations_by_ref"]) == [made["id"]]

    outsider = await register()
    refused = await _get(hub, f"{base}/manifest", outsider["headers"], 403)
    assert refused["error"] == "auth.forbidden"
    assert (await _get(hub, f"{base}/_status", outsider["headers"], 403))["error"] == "agent.not_joined"
    await _get(hub, f"{base}/manifest", {}, 401)

    keys, dbase = await _document(docs, runtime, ("editor", "reviewer"))
    joined = [
        await _join(docs, k, dbase, f"same-org-{i}", r)
        for i, (k, r) in enumerate(zip(keys, ("editor", "reviewer"), strict=True))
    ]
    manifest = await _get(docs, f"{dbase}/manifest", keys[0]["headers"])
    (peer,) = manifest["counterparties"]
    assert (peer["cross_org"], peer["agent_name"], peer["disclosure_level"]) == (
        False,
        "same-org-1",
        "reasoning",
    )
    assert manifest["caller_role"] == "contributor"  # what an editor is in PACT's roles
    assert manifest["caller"]["resource_role"] == "editor"
    assert manifest["phase"] == "forming"
    assert peer["agent_id"] == joined[1]["agentId"]
    stranger = await make_key(runtime, org="Acme", name="stranger")
    assert (await _get(docs, f"{dbase}/manifest", stranger["headers"], 403))["code"] == "auth.forbidden"
    other_org = await make_key(runtime, org="Globex", name="other")
    await _get(docs, f"{dbase}/_status", other_org["headers"], 404)


async def test_an_objection_ends_what_is_owed_and_human_only_owes_nothing(docs, runtime):
    keys, base = await _document(docs, runtime, ("editor", "reviewer", "reviewer"))
    roles = ("editor", "reviewer", "reviewer")
    for i, (k, r) in enumerate(zip(keys, roles, strict=True)):
        await _join(docs, k, base, f"agent{i}", r)
    body = {"sectionId": "sec:plan:risks", "content": "Fewer.", "summary": "s"}
    made = await _post(docs, f"{base}/proposals", keys[0]["headers"], body, 201)
    await _post(docs, f"{base}/proposals/{made['proposalId']}/object", keys[1]["headers"], {"reason": "ask"})
    status = await _get(docs, f"{base}/_status", keys[0]["headers"])
    assert status["pending_obligations"] == []
    assert status["phase"] == "escalated"  # the objected proposal waits for a person
    kinds = Counter(
        e["data"]["discharge_kind"]
        for e in await _events(docs, base, keys[0]["headers"])
        if e["type"] == "pact.obligation.discharged"
    )
    assert kinds == {"fulfilled": 1, "superseded": 1}

    human = await upload_ready(docs, keys[0], MD, "human.md", approvalPolicy="human-only")
    hbase = f"/api/pact/{human['id']}"
    for i, (k, r) in enumerate(zip(keys, roles, strict=True)):
        await _join(docs, k, hbase, f"agent{i}", r)
    await _post(docs, f"{hbase}/proposals", keys[0]["headers"], body, 201)
    status = await _get(docs, f"{hbase}/_status", keys[0]["headers"])
    assert status["pending_obligations"] == []  # a person decides: no agent owes a vote
    assert status["phase"] == "escalated"


async def test_an_onboardings_registration_is_answered_as_its_event_stores_it(docs, hub, register, runtime):
    """The answer's `registration` is the join's, key for key what `pact.fabric.onboarded` stores (issue 32:
    the answer is written from the join's record, the event's data from the stored format). The answer's
    keys are in its model's order; PostgreSQL serves stored data in its own key order."""
    keys, base = await _document(docs, runtime, ("editor",))
    body = {"agentName": "Finance", "role": "editor", "constraints": []}
    done = await _post(docs, f"{base}/_onboard", keys[0]["headers"], body)
    found = await _events(docs, base, keys[0]["headers"])
    stored = next(e for e in found if e["type"] == "pact.fabric.onboarded")["data"]["registration"]
    assert done["registration"] == stored

    topic_id, _ = await open_topic(hub, register, n_agents=1)
    newcomer = await register()
    tbase = f"/api/pact/{topic_id}"
    good = await _post(hub, f"{tbase}/_onboard", newcomer["headers"], {"constraints": []})
    onboarded = next(e for e in await _events(hub, tbase) if e["type"] == "pact.fabric.onboarded")
    assert good["registration"] == onboarded["data"]["registration"]
    assert good["registration"]["alreadyJoined"] is False
