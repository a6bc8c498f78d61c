"""Agents on a document: membership, content, sections, coordination, locks, escalation, events."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select, update

from tests.documents_support import make_key, upload_ready
from tests.waiting import eventually

MD = b"Preamble.\n\n# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n\n## Risks\n\nMany.\n"


async def _setup(docs, runtime):
    alice = await make_key(runtime, org="Acme", name="alice-key")
    bob = await make_key(runtime, org="Acme", name="bob-key")
    doc = await upload_ready(docs, alice, MD, "plan.md")
    return alice, bob, doc


async def test_join_leave_agents_content_and_sections(docs, runtime):
    alice, bob, doc = await _setup(docs, runtime)
    base = f"/api/tap/{doc['id']}"
    resp = await docs.post(
        f"{base}/join",
        headers=alice["headers"],
        json={
            "agentName": "Alice",
            "role": "editor",
            "capabilities": ["propose", "vote"],
            "inviteToken": "inv1",
        },
    )
    assert resp.status == 201, await resp.text()
    a = await resp.json()
    assert a["agentName"] == "Alice"
    assert a["role"] == "editor"
    assert a["joinedAt"]
    resp = await docs.post(f"{base}/join", headers=alice["headers"], json={"agentName": "Alice2"})
    assert resp.status == 409
    assert (await resp.json())["code"] == "agent.already_joined"
    resp = await docs.post(f"{base}/join", headers=bob["headers"], json={"agentName": "Alice"})
    assert resp.status == 409
    resp = await docs.post(f"{base}/join", headers=bob["headers"], json={"agentName": "Bob", "role": "boss"})
    assert resp.status == 400
    assert "role" in (await resp.json())["detail"]
    resp = await docs.post(
        f"/api/pact/{doc['id']}/join", headers=bob["headers"], json={"agentName": "Bob", "role": "reviewer"}
    )
    assert resp.status == 201
    resp = await docs.get(f"{base}/agents", headers=bob["headers"])
    names = [(x["agentName"], x["role"], x["status"]) for x in (await resp.json())["agents"]]
    assert names == [("Alice", "editor", "active"), ("Bob", "reviewer", "active")]
    resp = await docs.get(f"/api/documents/{doc['id']}", headers=alice["headers"])
    assert (await resp.json())["reviewers"] == 1

    resp = await docs.get(f"{base}/content", headers=bob["headers"])
    body = await resp.json()
    assert body["documentId"] == doc["id"]
    assert body["format"] == "markdown"
    assert body["content"] == MD.decode()
    assert body["updatedAt"]
    resp = await docs.get(f"/api/pact/{doc['id']}/sections", headers=bob["headers"])
    tree = (await resp.json())["sections"]
    assert [s["sectionId"] for s in tree] == ["sec:_root", "sec:plan"]
    plan = tree[1]
    assert plan["title"] == "Plan"
    assert plan["level"] == 1
    assert [(c["sectionId"], c["level"]) for c in plan["children"]] == [
        ("sec:plan:budget", 2),
        ("sec:plan:risks", 2),
    ]

    # PACT CLI: leave without a body; the key identifies the agent.
    resp = await docs.delete(f"/api/pact/{doc['id']}/leave", headers=bob["headers"])
    assert resp.status == 200
    left = await resp.json()
    assert left["success"] is True
    assert left["leftAt"]
    resp = await docs.get(f"{base}/agents", headers=alice["headers"])
    assert [x["agentName"] for x in (await resp.json())["agents"]] == ["Alice"]
    resp = await docs.delete(f"{base}/leave", headers=bob["headers"])
    assert resp.status == 403
    # After leaving, the key may join again.
    resp = await docs.post(f"{base}/join", headers=bob["headers"], json={"agentName": "Bob"})
    assert resp.status == 201
    resp = await docs.delete(f"{base}/leave", headers=alice["headers"], json={"agentId": "someone-else"})
    assert resp.status == 403


async def test_intents_constraints_and_salience(docs, runtime):
    alice, bob, doc = await _setup(docs, runtime)
    base = f"/api/pact/{doc['id']}"
    resp = await docs.post(
        f"{base}/intents", headers=alice["headers"], json={"sectionId": "sec:plan", "goal": "x"}
    )
    assert resp.status == 403
    assert (await resp.json())["code"] == "agent.not_joined"
    await docs.post(f"{base}/join", headers=alice["headers"], json={"agentName": "Alice"})
    await docs.post(f"{base}/join", headers=bob["headers"], json={"agentName": "Bob", "role": "observer"})
    resp = await docs.post(
        f"{base}/intents",
        headers=alice["headers"],
        json={"sectionId": "sec:plan:budget", "goal": "Add a contingency line", "category": "finance"},
    )
    assert resp.status == 201
    intent = await resp.json()
    assert intent["intentId"]
    assert (intent["goal"], intent["category"], intent["agentName"]) == (
        "Add a contingency line",
        "finance",
        "Alice",
    )
    resp = await docs.post(
        f"{base}/intents", headers=alice["headers"], json={"sectionId": "sec:nope", "goal": "x"}
    )
    assert resp.status == 404
    resp = await docs.post(
        f"{base}/intents", headers=bob["headers"], json={"sectionId": "sec:plan:risks", "goal": "y"}
    )
    assert resp.status == 403  # observers read, score salience and comment, nothing more
    assert (await resp.json())["code"] == "role.insufficient"
    resp = await docs.get(f"{base}/intents?sectionId=sec:plan:budget", headers=bob["headers"])
    listed = await resp.json()
    assert listed == {"intents": [intent]}
    resp = await docs.get(f"{base}/intents?sectionId=sec:plan:risks", headers=bob["headers"])
    assert (await resp.json()) == {"intents": []}

    resp = await docs.post(
        f"{base}/constraints",
        headers=alice["headers"],
        json={"sectionId": "sec:plan:budget", "boundary": "Never exceed 1M", "type": "must_not"},
    )
    assert resp.status == 201
    constraint = await resp.json()
    assert constraint["constraintId"]
    resp = await docs.post(
        f"{base}/constraints",
        headers=alice["headers"],
        json={"sectionId": "sec:plan:budget", "boundary": "x", "type": "maybe"},
    )
    assert resp.status == 400
    resp = await docs.get(f"{base}/constraints", headers=bob["headers"])
    listed = await resp.json()
    assert [(c["boundary"], c["type"]) for c in listed["constraints"]] == [("Never exceed 1M", "must_not")]

    scored = []
    for key, score in ((alice, 8), (bob, 3), (alice, 9)):
        resp = await docs.post(
            f"{base}/salience", headers=key["headers"], json={"sectionId": "sec:plan:budget", "score": score}
        )
        assert resp.status == 200
        scored.append(await resp.json())
    # A new score replaces the agent's old one; createdAt stays the time of its first score.
    assert (scored[2]["score"], scored[2]["createdAt"]) == (9, scored[0]["createdAt"])
    assert scored[1]["agentName"] == "Bob"
    for bad in (11, -1, True, "5", 2.5):  # strict integers 0-10, as on the hub
        resp = await docs.post(
            f"{base}/salience", headers=bob["headers"], json={"sectionId": "sec:plan", "score": bad}
        )
        assert resp.status == 400, bad
    resp = await docs.get(f"{base}/salience", headers=bob["headers"])
    body = await resp.json()
    sal = body["salience"]
    assert sal == [
        {
            "sectionId": "sec:plan:budget",
            "scores": [
                {"agentId": sal[0]["scores"][0]["agentId"], "agentName": "Alice", "score": 9},
                {"agentId": sal[0]["scores"][1]["agentId"], "agentName": "Bob", "score": 3},
            ],
            "average": 6.0,
        }
    ]
    assert [(e["agentName"], e["sectionId"], e["score"]) for e in body["entries"]] == [
        ("Alice", "sec:plan:budget", 9),
        ("Bob", "sec:plan:budget", 3),
    ]
    resp = await docs.get(f"{base}/events?after=0&limit=200", headers=alice["headers"])
    kinds = [e["type"] for e in (await resp.json())["events"]]
    assert (kinds.count("pact.intent.declared"), kinds.count("pact.constraint.published")) == (1, 1)
    assert kinds.count("pact.salience.set") == 3


async def test_section_locks(docs, runtime):
    from domain import wiring
    from domain.documents import locks
    from domain.documents.models import SectionLock
    from domain.kernel import sweeps
    from domain.kernel.clock import utcnow

    alice, bob, doc = await _setup(docs, runtime)
    base = f"/api/tap/{doc['id']}"
    await docs.post(f"{base}/join", headers=alice["headers"], json={"agentName": "Alice"})
    await docs.post(f"{base}/join", headers=bob["headers"], json={"agentName": "Bob", "role": "reviewer"})
    resp = await docs.post(f"{base}/sections/sec:plan:budget/lock", headers=alice["headers"])
    assert resp.status == 200, await resp.text()
    lock = await resp.json()
    assert lock["sectionId"] == "sec:plan:budget"
    assert lock["ttlSeconds"] == 300
    assert lock["expiresAt"]
    alice_id = lock["lockedBy"]
    resp = await docs.post(
        f"{base}/sections/sec:plan:budget/lock", headers=bob["headers"], json={"ttlSeconds": 30}
    )
    assert resp.status == 409
    conflict = await resp.json()
    assert conflict["code"] == "section.locked"
    assert conflict["lockedBy"] == alice_id
    resp = await docs.delete(f"{base}/sections/sec:plan:budget/lock", headers=bob["headers"])
    assert resp.status == 403
    resp = await docs.post(f"{base}/sections/sec:nope/lock", headers=bob["headers"])
    assert resp.status == 404
    resp = await docs.post(f"{base}/sections/sec:plan/lock", headers=bob["headers"], json={"ttlSeconds": 0})
    assert resp.status == 400
    resp = await docs.delete(f"{base}/sections/sec:plan:budget/lock", headers=alice["headers"])
    assert await resp.json() == {"sectionId": "sec:plan:budget", "unlocked": True}
    resp = await docs.post(
        f"/api/pact/{doc['id']}/sections/sec:plan:budget/lock",
        headers=bob["headers"],
        json={"ttlSeconds": 60},
    )
    assert resp.status == 200

    # Leaving releases the leaver's locks.
    await docs.delete(f"{base}/leave", headers=bob["headers"])
    resp = await docs.post(f"{base}/sections/sec:plan:budget/lock", headers=alice["headers"])
    assert resp.status == 200

    # The scheduler's sweep ends a lock at its TTL.
    async with runtime.db.transaction() as session:
        await session.execute(update(SectionLock).values(expires_at=utcnow() - timedelta(seconds=1)))
    item = next(s for s in wiring.SWEEPS if s.fn is locks.expire_locks)
    assert await sweeps.run(runtime.db, item, "test") == 1
    async with runtime.db.read() as session:
        assert await session.scalar(select(func.count(SectionLock.id))) == 0
    resp = await docs.get(f"{base}/events?after=0&limit=200", headers=alice["headers"])
    unlocked = [e for e in (await resp.json())["events"] if e["type"] == "pact.section.unlocked"]
    assert [e["data"]["reason"] for e in unlocked] == ["released", "left", "expired"]


async def test_escalation_events_poll_and_audit(docs, runtime):
    from domain.consensus.models import Escalation
    from domain.kernel.models import AuditEntry

    alice, bob, doc = await _setup(docs, runtime)
    base = f"/api/pact/{doc['id']}"
    await docs.post(f"{base}/join", headers=alice["headers"], json={"agentName": "Alice"})
    resp = await docs.post(
        f"{base}/escalate",
        headers=alice["headers"],
        json={"question": "Is the budget legal?", "sectionId": "sec:plan:budget", "priority": "high"},
    )
    assert resp.status == 201, await resp.text()
    esc = await resp.json()
    assert esc["status"] == "open"
    assert esc["question"] == "Is the budget legal?"
    assert esc["priority"] == "high"
    # The PACT CLI sends `message`.
    resp = await docs.post(
        f"{base}/escalate", headers=alice["headers"], json={"message": "Help", "sectionId": "sec:plan"}
    )
    assert resp.status == 201
    resp = await docs.post(f"{base}/escalate", headers=alice["headers"], json={"priority": "low"})
    assert resp.status == 400
    resp = await docs.post(
        f"{base}/escalate", headers=alice["headers"], json={"question": "q", "priority": "urgent!"}
    )
    assert resp.status == 400
    resp = await docs.post(
        f"{base}/escalate", headers=alice["headers"], json={"question": "q", "proposalId": "nope"}
    )
    assert resp.status == 404

    async def delivered():
        async with runtime.db.read() as session:
            row = await session.get(Escalation, esc["escalationId"])
            return row.delivery_status == "delivered"

    await eventually(delivered)

    resp = await docs.get(f"{base}/events?after=0&limit=2", headers=alice["headers"])
    page = await resp.json()
    assert [e["type"] for e in page["events"]] == ["pact.document.uploaded", "pact.document.ready"]
    assert page["hasMore"] is True
    resp = await docs.get(f"{base}/events?after={page['nextCursor']}", headers=alice["headers"])
    types = [e["type"] for e in (await resp.json())["events"]]
    assert types == ["pact.agent.joined", "pact.escalation.human", "pact.escalation.human"]

    resp = await docs.get(f"{base}/poll", headers=alice["headers"])
    poll = await resp.json()
    assert poll["since"] == "evt_0"
    assert poll["cursor"] == "evt_5"
    assert [c["type"] for c in poll["changes"]][-1] == "pact.escalation.human"
    resp = await docs.get(f"{base}/poll?since={poll['cursor']}&limit=10", headers=alice["headers"])
    assert (await resp.json())["changes"] == []
    resp = await docs.get(f"{base}/poll?since=evt_2&sectionId=sec:plan:budget", headers=alice["headers"])
    assert [c["section"] for c in (await resp.json())["changes"]] == ["sec:plan:budget"]
    resp = await docs.get(f"{base}/poll?since=bogus", headers=alice["headers"])
    assert resp.status == 400

    async with runtime.db.read() as session:
        ops = set((await session.scalars(select(AuditEntry.op))).all())
    assert {"document.upload", "document.convert", "document.join", "escalation.create"} <= ops


async def test_concurrent_joins_and_locks_have_one_winner(docs, runtime):
    import asyncio

    alice, bob, doc = await _setup(docs, runtime)
    base = f"/api/tap/{doc['id']}"
    joins = await asyncio.gather(
        *(docs.post(f"{base}/join", headers=alice["headers"], json={"agentName": f"A{i}"}) for i in range(4))
    )
    assert sorted(r.status for r in joins) == [201, 409, 409, 409]
    await docs.post(f"{base}/join", headers=bob["headers"], json={"agentName": "Bob"})
    locks = await asyncio.gather(
        *(docs.post(f"{base}/sections/sec:plan/lock", headers=k["headers"]) for k in (alice, bob, alice, bob))
    )
    statuses = sorted(r.status for r in locks)
    assert statuses.count(409) >= 1
    holders = {(await r.json())["lockedBy"] for r in locks if r.status == 200}
    assert len(holders) == 1
