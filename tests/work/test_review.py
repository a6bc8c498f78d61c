"""Curators keep the final word on deferred work: the queue with the validator's findings, accept (held
credits paid once, the observation becomes market data) and reject (a defect), each a single decision,
audited and told to the agent; staff resolve defects."""

import asyncio

from tests.axiom_helpers import staff_headers
from tests.work.support import balance, claim, observation, submit

FAR = {"priceCents": 9000, "unitPriceCents": 2250}  # 50% above the median: deferred


async def deferred_submission(hub, register, shop, page):
    agent = await register()
    assignment = await claim(hub, agent)
    result = await (await submit(hub, agent, assignment["id"], observation(shop, page, **FAR))).json()
    assert result["status"] == "deferred", result
    return agent, result


async def test_a_curator_accepts_a_deferred_observation_once(hub, market, register, shop, fast):
    curator = await staff_headers(market, "Cora Curator", roles=("curator",))
    agent, result = await deferred_submission(hub, register, shop, "ok-curated")
    before = await balance(hub, agent)

    queue = await (await hub.get("/api/review/work", headers=curator)).json()
    assert queue["status"] == "deferred"
    assert queue["total"] == 1
    item = queue["submissions"][0]
    assert item["submissionId"] == result["submissionId"]
    assert item["agentName"] == agent["agentName"]
    assert item["submission"]["productUrl"].endswith("/p/ok-curated")
    assert item["retailer"]["domain"] == "127.0.0.1"
    assert any(c["code"] == "far_from_median" for c in item["checks"])
    one = await hub.get(f"/api/review/work/{result['submissionId']}", headers=curator)
    assert one.status == 200
    assert (await one.json())["creditsHeld"] == 2

    answers = await asyncio.gather(
        *(
            hub.post(
                f"/api/review/work/{result['submissionId']}/accept",
                json={"note": "checked the shelf"},
                headers=curator,
            )
            for _ in range(3)
        )
    )
    assert sorted(r.status for r in answers) == [200, 409, 409]
    decided = next([await r.json() for r in answers if r.status == 200].__iter__())
    assert decided["status"] == "accepted"
    assert decided["creditsAwarded"] == 2
    assert decided["priceObservationId"]
    assert decided["decidedBy"] == "Cora Curator"
    assert decided["decisionNote"] == "checked the shelf"
    assert await balance(hub, agent) == before + 2
    again = await hub.post(
        f"/api/review/work/{result['submissionId']}/reject", json={"note": "no"}, headers=curator
    )
    assert again.status == 409
    assert (await again.json())["error"] == "already_decided"

    # The agent reads the decision; the audit trail holds it; the queue is empty.
    feed = await (await hub.get("/api/work/events", headers=agent["headers"])).json()
    assert [e["type"] for e in feed["events"]] == ["work.submission.deferred", "work.submission.accepted"]
    assert feed["events"][-1]["actorKind"] == "Individual"
    polled = await (await hub.get(result["url"], headers=agent["headers"])).json()
    assert polled["accepted"] is True
    assert polled["creditsAwarded"] == 2
    assert (await (await hub.get("/api/review/work", headers=curator)).json())["total"] == 0
    accepted = await (await hub.get("/api/review/work?status=accepted", headers=curator)).json()
    assert [s["submissionId"] for s in accepted["submissions"]] == [result["submissionId"]]
    async with market.db.read() as session:
        from sqlalchemy import select

        from domain.kernel.models import AuditEntry

        ops = (
            await session.scalars(select(AuditEntry.op).where(AuditEntry.entity_id == result["submissionId"]))
        ).all()
    assert "work.review.accept" in ops


async def test_a_curator_rejects_and_the_defect_is_recorded(hub, market, register, shop, fast):
    curator = await staff_headers(market, "Cora Curator", roles=("curator",))
    agent, result = await deferred_submission(hub, register, shop, "ok-refused")
    before = await balance(hub, agent)
    resp = await hub.post(f"/api/review/work/{result['submissionId']}/reject", json={}, headers=curator)
    assert resp.status == 400  # a rejection says why
    resp = await hub.post(
        f"/api/review/work/{result['submissionId']}/reject",
        json={"note": "a 10 L tin, not 4 L"},
        headers=curator,
    )
    assert resp.status == 200, await resp.text()
    decided = await resp.json()
    assert decided["status"] == "rejected"
    assert decided["priceDefectId"]
    assert decided["creditsAwarded"] == 0
    assert await balance(hub, agent) == before
    defects = await (await hub.get("/api/work/defects?status=accepted", headers=curator)).json()
    assert [d["id"] for d in defects["defects"]] == [decided["priceDefectId"]]
    assert defects["defects"][0]["reason"] == "curator_rejected"
    assert defects["defects"][0]["resolvedBy"] == "Cora Curator"
    feed = await (await hub.get("/api/work/events", headers=agent["headers"])).json()
    assert feed["events"][-1]["type"] == "work.submission.rejected"


async def test_roles_and_keys(hub, market, register, shop, fast):
    reviewer = await staff_headers(market, "Rey Reviewer", roles=("reviewer",))
    agent, result = await deferred_submission(hub, register, shop, "ok-roles")
    resp = await hub.get("/api/review/work", headers=reviewer)
    assert resp.status == 403
    assert (await resp.json())["error"] == "insufficient_role"
    resp = await hub.post(
        f"/api/review/work/{result['submissionId']}/accept", json={}, headers=agent["headers"]
    )
    assert resp.status == 401
    curator = await staff_headers(market, "Cora Curator", roles=("curator",))
    for bad in ("nope", "00000000-0000-4000-8000-000000000000"):
        resp = await hub.post(f"/api/review/work/{bad}/accept", json={}, headers=curator)
        assert resp.status == 404
    resp = await hub.get("/api/review/work?status=pending", headers=curator)
    assert resp.status == 400


async def test_staff_resolve_defects(hub, market, register, shop, fast):
    agent = await register()
    assignment = await claim(hub, agent)
    rejected = await (await submit(hub, agent, assignment["id"], observation(shop, "gone-2"))).json()
    staff = await staff_headers(market, "Rey Reviewer", roles=("reviewer",))
    assert (await hub.get("/api/work/defects", headers=agent["headers"])).status == 401
    listed = await (await hub.get("/api/work/defects", headers=staff)).json()
    assert listed["filter"]["status"] == "open"
    assert listed["count"] == 1
    defect = listed["defects"][0]
    assert defect["id"] == rejected["priceDefectId"]
    assert defect["reason"] == "url_not_found"
    assert defect["submittedBy"] == agent["agentId"]
    assert defect["scenario"] == "paint_interior_wall_l"
    by_agent = await (
        await hub.get(f"/api/work/defects?status=all&submittedBy={agent['agentId']}", headers=staff)
    ).json()
    assert by_agent["count"] == 1
    other = await (await hub.get("/api/work/defects?status=all&cluster=elsewhere", headers=staff)).json()
    assert other["count"] == 0
    assert (await hub.get("/api/work/defects?limit=501", headers=staff)).status == 400

    resp = await hub.post(
        f"/api/work/defects/{defect['id']}/resolve", json={"status": "maybe"}, headers=staff
    )
    assert resp.status == 400
    resp = await hub.post(
        f"/api/work/defects/{defect['id']}/resolve",
        json={"status": "accepted", "note": "page is gone"},
        headers=staff,
    )
    assert resp.status == 200
    assert (await resp.json())["status"] == "accepted"
    resp = await hub.post(
        f"/api/work/defects/{defect['id']}/resolve", json={"status": "dismissed"}, headers=staff
    )
    assert resp.status == 409
    feed = await (await hub.get("/api/work/events", headers=agent["headers"])).json()
    assert feed["events"][-1]["type"] == "work.defect.resolved"
    assert feed["events"][-1]["data"]["status"] == "accepted"


async def test_a_submission_answers_its_fields_in_order_and_only_those_of_its_kind(
    hub, market, register, shop, fast
):
    """The wire shape the submission and review answers always had (issue 32 moved where it is written): the
    spec's fields in the model's order, a price observation's ids only once there are any, no spot-check
    `defectIds`, and on the review API the curator's fields after `url`."""
    curator = await staff_headers(market, "Cora Curator", roles=("curator",))
    _agent, result = await deferred_submission(hub, register, shop, "ok-shape")
    spec = ["submissionId", "assignmentId", "workType", "status", "accepted", "deferred", "creditsAwarded"]
    spec += ["creditsHeld", "ledgerId", "notes", "checks", "decidedBy"]
    assert list(result) == [*spec, "url"]
    item = await (await hub.get(f"/api/review/work/{result['submissionId']}", headers=curator)).json()
    curators = ["agentId", "agentName", "submission", "itemKey", "retailer", "createdAt", "decidedAt"]
    assert list(item) == [*spec, "url", *curators, "decisionNote"]
    assert item["url"] == f"/api/review/work/{result['submissionId']}"
    decided = await (
        await hub.post(
            f"/api/review/work/{result['submissionId']}/reject", json={"note": "no"}, headers=curator
        )
    ).json()
    assert list(decided) == [*spec, "priceDefectId", "url", *curators, "decisionNote"]
