"""Submitting price observations: every rule of the spec's table (a 400 naming the field that leaves the
assignment as it was), each validator outcome against a local retailer site, the 202 path, credits that
move exactly once whatever deliveries happen, concurrent submits, and spot-checks."""

import asyncio

import pytest
from aiohttp import web
from sqlalchemy import func, select

from domain import wiring
from domain.kernel import outbox
from domain.kernel.models import LedgerEntry, OutboxJob
from domain.market.models import PriceObservation
from domain.work import validator
from domain.work.models import WorkSubmission
from domain.work.settings import get_work_settings
from tests.lock_probe import write_now
from tests.waiting import eventually
from tests.work.support import ITEM, balance, claim, observation, submit

RULES: list[tuple[dict[str, object], str]] = [
    ({"itemKey": "no_such_key"}, "submission.itemKey"),
    ({"itemKey": "tile_grout_kg", "unitPriceUnit": "kg"}, "submission.itemKey"),  # not this assignment's key
    ({"retailerSlug": "nobody"}, "submission.retailerSlug"),
    ({"productName": "Tin"}, "submission.productName"),
    ({"productName": "x" * 251}, "submission.productName"),
    ({"productUrl": "ftp://127.0.0.1/p/ok"}, "submission.productUrl"),
    ({"productUrl": "not a url"}, "submission.productUrl"),
    ({"productUrl": "http://user:pw@127.0.0.1/p/ok"}, "submission.productUrl"),
    ({"priceCents": 0}, "submission.priceCents"),
    ({"priceCents": 12.5}, "submission.priceCents"),
    ({"priceCents": "6000"}, "submission.priceCents"),
    ({"priceCents": True}, "submission.priceCents"),
    ({"unitPriceCents": 0}, "submission.unitPriceCents"),
    ({"unitPriceUnit": "m3"}, "submission.unitPriceUnit"),
    ({"unitPriceUnit": "kg"}, "submission.unitPriceUnit"),  # the item key is priced per L
    ({"ean": "9300000000001"}, "submission.ean"),  # check digit wrong
    ({"ean": "12345"}, "submission.ean"),
    ({"inStock": "yes"}, "submission.inStock"),
    ({"itemKey": None}, "submission.itemKey"),
]


@pytest.mark.parametrize(
    ("change", "field"), RULES, ids=[f"{f}={next(iter(c.values()))!r}"[:60] for c, f in RULES]
)
async def test_every_rule_is_a_400_naming_the_field(hub, market, register, shop, change, field):
    agent = await register()
    assignment = await claim(hub, agent)
    resp = await submit(hub, agent, assignment["id"], observation(shop, **change))
    assert resp.status == 400, await resp.text()
    error = await resp.json()
    assert error["field"] == field, error
    assert field in error["detail"]
    # Nothing was written: the assignment is still claimed by the agent and takes a good submission.
    mine = await (await hub.get("/api/work/assignments?status=claimed", headers=agent["headers"])).json()
    assert [a["id"] for a in mine["assignments"]] == [assignment["id"]]
    resp = await submit(hub, agent, assignment["id"], observation(shop))
    assert resp.status in (200, 202), await resp.text()


async def test_the_unit_is_the_item_keys_as_the_spec_spells_it(hub, market, register, shop):
    """A key priced per m² takes unit prices per m2 (the wire's spelling), and a wrong unit's 400 names the
    unit to use in that spelling."""
    agent = await register()
    tiles = "tile_floor_ceramic_m2"
    assignment = await claim(hub, agent, tiles)
    resp = await submit(hub, agent, assignment["id"], observation(shop, itemKey=tiles, unitPriceUnit="L"))
    assert resp.status == 400, await resp.text()
    error = await resp.json()
    assert (error["error"], error["field"]) == ("unit_mismatch", "submission.unitPriceUnit"), error
    assert "priced per m2, not L" in error["detail"], error
    resp = await submit(hub, agent, assignment["id"], observation(shop, itemKey=tiles, unitPriceUnit="m2"))
    assert resp.status in (200, 202), await resp.text()


async def test_missing_fields_and_bad_bodies(hub, market, register, shop):
    agent = await register()
    assignment = await claim(hub, agent)
    for name in ("itemKey", "retailerSlug", "productName", "productUrl", "priceCents", "unitPriceCents"):
        body = observation(shop)
        del body[name]
        resp = await submit(hub, agent, assignment["id"], body)
        assert resp.status == 400
        assert (await resp.json())["field"] == f"submission.{name}"
    for bad in ({"assignmentId": "nope", "submission": {}}, {"assignmentId": assignment["id"]}, {}):
        resp = await hub.post("/api/work/submit", json=bad, headers=agent["headers"])
        assert resp.status == 400, bad
    resp = await hub.post(
        "/api/work/submit",
        json={"assignmentId": assignment["id"], "submission": [1]},
        headers=agent["headers"],
    )
    assert resp.status == 400
    resp = await submit(hub, agent, "00000000-0000-4000-8000-000000000000", observation(shop))
    assert resp.status == 404
    resp = await hub.post("/api/work/submit", json={"assignmentId": assignment["id"], "submission": {}})
    assert resp.status == 401


async def test_accepted_pays_once_and_becomes_crowd_market_data(hub, market, register, shop, fast):
    agent = await register()
    before = await balance(hub, agent)
    assignment = await claim(hub, agent)
    resp = await submit(hub, agent, assignment["id"], observation(shop, ean="9300633604370"))
    assert resp.status == 200, await resp.text()
    result = await resp.json()
    assert result["accepted"] is True
    assert result["deferred"] is False
    assert result["status"] == "accepted"
    assert result["creditsAwarded"] == 2
    assert result["creditsHeld"] == 0
    assert result["priceObservationId"]
    assert "priceDefectId" not in result
    assert {c["check"]: c["result"] for c in result["checks"]} == {
        "domain": "pass",
        "url": "pass",
        "sanity": "pass",
        "duplicate": "pass",
        "retailer": "pass",
        "median": "pass",
    }
    assert await balance(hub, agent) == before + 2
    wallet = await (await hub.get("/api/pact/wallet", headers=agent["headers"])).json()
    assert [(t["amount"], t["reason"]) for t in wallet["transactions"] if t["ref"] == result["ledgerId"]] == [
        (2, "work:price_observation_mining")
    ]
    async with market.db.read() as session:
        entry = await session.scalar(select(LedgerEntry).where(LedgerEntry.ref == result["ledgerId"]))
        assert entry is not None
        assert entry.amount == 2

    # The observation is market data now: in the quote rates of its item key and in price history.
    rates = await (await hub.get(f"/api/market/quote-rates?items={ITEM}")).json()
    crowd = [o for o in rates["rates"][ITEM]["observations"] if o["product_url"].endswith("/p/ok")]
    assert len(crowd) == 1
    assert crowd[0]["rate_aud"] == 15.0
    assert crowd[0]["price_aud"] == 60.0
    history = await (await hub.get(f"/api/market/products/history?productId={crowd[0]['product_id']}")).json()
    assert [o["source"] for o in history["observations"]] == ["crowd"]
    assert history["product"]["ean"] in ("9300633604370", "09300633604370")

    # The agent's feed says so, and the assignment is resolved; a second submit is a conflict.
    feed = await (await hub.get("/api/work/events", headers=agent["headers"])).json()
    assert [e["type"] for e in feed["events"]] == ["work.submission.accepted"]
    async with market.db.read() as session:
        from domain.kernel.models import AuditEntry

        ops = set(
            (
                await session.scalars(
                    select(AuditEntry.op).where(AuditEntry.entity_id == result["submissionId"])
                )
            ).all()
        )
    assert ops == {"work.submit", "work.validate.accepted"}
    again = await submit(hub, agent, assignment["id"], observation(shop))
    assert again.status == 409
    assert (await again.json())["error"] == "already_resolved"
    polled = await hub.get(f"/api/work/submissions/{result['submissionId']}", headers=agent["headers"])
    assert polled.status == 200
    assert (await polled.json())["accepted"] is True
    other = await register()
    resp = await hub.get(f"/api/work/submissions/{result['submissionId']}", headers=other["headers"])
    assert resp.status == 404


OUTCOMES = [
    # (page, changes, status, check that decided, its code)
    ("nohead-1", {}, "accepted", "url", ""),  # HEAD refused, GET answers: fine
    ("gone-1", {}, "rejected", "url", "url_not_found"),
    ("waf-1", {}, "deferred", "url", "url_http_403"),  # inconclusive is not invalid
    ("moved-1", {}, "deferred", "url", "redirect_off_domain"),
    ("ok-far", {"priceCents": 9000, "unitPriceCents": 2250}, "deferred", "median", "far_from_median"),
    ("ok-odd", {"priceCents": 100, "unitPriceCents": 1_000_000}, "rejected", "sanity", "price_inconsistent"),
]


@pytest.mark.parametrize(
    ("page", "changes", "status", "check", "code"), OUTCOMES, ids=[o[0] for o in OUTCOMES]
)
async def test_validator_outcomes(hub, market, register, shop, fast, page, changes, status, check, code):
    agent = await register()
    before = await balance(hub, agent)
    assignment = await claim(hub, agent)
    resp = await submit(hub, agent, assignment["id"], observation(shop, page, **changes))
    assert resp.status == 200, await resp.text()
    result = await resp.json()
    assert result["status"] == status, result
    finding = next(c for c in result["checks"] if c["check"] == check)
    assert finding["result"] == {"accepted": "pass", "deferred": "defer", "rejected": "reject"}[status], (
        result
    )
    assert finding["code"] == code
    paid = 2 if status == "accepted" else 0
    assert result["creditsAwarded"] == paid
    assert await balance(hub, agent) == before + paid
    assert result["creditsHeld"] == (2 if status == "deferred" else 0)
    assert result["deferred"] is (status == "deferred")
    if status == "rejected":
        assert result["priceDefectId"]
    else:
        assert "priceDefectId" not in result
    feed = await (await hub.get("/api/work/events", headers=agent["headers"])).json()
    assert feed["events"][-1]["type"] == f"work.submission.{status}"
    assert feed["events"][-1]["data"]["submissionId"] == result["submissionId"]


async def test_a_url_off_the_retailers_domain_is_rejected_without_contacting_it(
    hub, market, register, shop, hits, fast
):
    agent = await register()
    assignment = await claim(hub, agent)
    body = observation(shop, productUrl=f"http://localhost:{shop.port}/p/elsewhere")
    result = await (await submit(hub, agent, assignment["id"], body)).json()
    assert result["status"] == "rejected"
    assert next(c for c in result["checks"] if c["check"] == "domain")["code"] == "domain_mismatch"
    assert hits["elsewhere"] == 0


async def test_private_addresses_are_refused_unless_the_operator_allows_them(
    hub, market, register, shop, settings, monkeypatch, fast
):
    monkeypatch.setattr(settings, "outbound_allow_private", False)
    agent = await register()
    assignment = await claim(hub, agent)
    result = await (await submit(hub, agent, assignment["id"], observation(shop))).json()
    assert result["status"] == "rejected"
    assert next(c for c in result["checks"] if c["check"] == "url")["code"] == "url_refused"


async def test_duplicates_and_new_retailers(hub, market, register, shop, fast):
    first, second = await register(), await register()
    a = await claim(hub, first)
    assert (await (await submit(hub, first, a["id"], observation(shop, "ok-dup"))).json())[
        "status"
    ] == "accepted"
    b = await claim(hub, second)
    dup = await (await submit(hub, second, b["id"], observation(shop, "ok-dup"))).json()
    assert dup["status"] == "rejected"
    assert next(c for c in dup["checks"] if c["check"] == "duplicate")["code"] == "duplicate"

    # A retailer with no observation at all yet: a person looks first.
    async with market.db.transaction() as session:
        from domain.market.models import Retailer

        session.add(
            Retailer(
                slug="newshop",
                name="New Shop",
                domain="127.0.0.1",
                delivery_fee_cents=0,
                pickup_available=False,
                pickup_fee_cents=0,
            )
        )
    c = await claim(hub, second, "paint_ceiling_l")
    body = observation(shop, "ok-new", retailerSlug="newshop", itemKey="paint_ceiling_l")
    new = await (await submit(hub, second, c["id"], body)).json()
    assert new["status"] == "deferred"
    codes = {x["code"] for x in new["checks"] if x["result"] == "defer"}
    assert {"first_from_retailer", "no_median"} <= codes


async def test_the_answer_is_202_while_the_validator_runs(hub, market, register, shop, monkeypatch):
    monkeypatch.setattr(get_work_settings(), "submit_wait_seconds", 0)
    agent = await register()
    assignment = await claim(hub, agent)
    resp = await submit(hub, agent, assignment["id"], observation(shop, "slow-1"))
    assert resp.status == 202, await resp.text()
    body = await resp.json()
    assert body["status"] == "validating"
    assert body["accepted"] is False
    assert body["creditsHeld"] == 2
    assert resp.headers["Location"] == body["url"] == f"/api/work/submissions/{body['submissionId']}"
    assert "poll" in body["notes"]

    async def done():
        r = await hub.get(body["url"], headers=agent["headers"])
        return r.status == 200 and await r.json()

    final = await eventually(done, timeout=30)
    assert final["status"] == "accepted"
    assert final["ledgerId"] == body["ledgerId"]


async def test_credits_move_once_when_the_job_is_delivered_twice(
    hub, market, register, shop, hits, monkeypatch
):
    """Two more deliveries of the validator job run side by side, as the outbox runs them, beside the
    worker's own: the URL is checked by one at a time (the others are told the job is busy), and there is
    one outcome, one payment, one observation, one event."""
    monkeypatch.setattr(get_work_settings(), "submit_wait_seconds", 0)
    agent = await register()
    before = await balance(hub, agent)
    assignment = await claim(hub, agent)
    body = await (await submit(hub, agent, assignment["id"], observation(shop, "slow-twice"))).json()
    async with market.db.read() as session:
        job_id = await session.scalar(
            select(OutboxJob.id).where(OutboxJob.actor == validator.VALIDATE_JOB.name)
        )

    async def deliver():
        try:
            await outbox.run(market.db, job_id, wiring.JOBS)
        except outbox.Busy:
            pass  # another delivery is checking the URL; the worker would send this one again later

    await asyncio.gather(deliver(), deliver())

    async def decided():
        r = await hub.get(body["url"], headers=agent["headers"])
        return r.status == 200 and await r.json()

    final = await eventually(decided, timeout=30)
    await deliver()  # a late redelivery after the outcome changes nothing
    assert final["status"] == "accepted"
    assert await balance(hub, agent) == before + 2
    async with market.db.read() as session:
        payments = await session.scalar(
            select(func.count(LedgerEntry.id)).where(LedgerEntry.ref == body["ledgerId"])
        )
        crowd = await session.scalar(
            select(func.count(PriceObservation.id)).where(PriceObservation.source == "crowd")
        )
    assert payments == 1
    assert crowd == 1
    assert hits["slow-twice"] == 1  # one HEAD: no delivery checked the URL while another was at it
    feed = await (await hub.get("/api/work/events", headers=agent["headers"])).json()
    assert [e["type"] for e in feed["events"]] == ["work.submission.accepted"]


async def test_two_submits_at_once_make_one_submission(hub, market, register, shop, fast):
    agent = await register()
    assignment = await claim(hub, agent)
    answers = await asyncio.gather(
        *(submit(hub, agent, assignment["id"], observation(shop, f"ok-race-{n}")) for n in range(4))
    )
    statuses = sorted(r.status for r in answers)
    assert statuses[0] in (200, 202), statuses
    assert statuses[1:] == [409, 409, 409], statuses
    async with market.db.read() as session:
        count = await session.scalar(
            select(func.count(WorkSubmission.id)).where(WorkSubmission.assignment_id == assignment["id"])
        )
    assert count == 1


async def test_spot_checks_record_defects(hub, market, register):
    agent = await register()
    before = await balance(hub, agent)
    resp = await hub.post(
        "/api/work/claim",
        json={"workType": "applicability_spotcheck", "payload": {"scenario": "wet-area waterproofing"}},
        headers=agent["headers"],
    )
    assignment = (await resp.json())["assignment"]
    bad = await submit(hub, agent, assignment["id"], {"defects": [{"cluster": "QLD"}]})
    assert bad.status == 400
    assert (await bad.json())["field"] == "submission.defects.0.description"
    bad = await submit(hub, agent, assignment["id"], {"defects": "none"})
    assert bad.status == 400
    submission = {
        "scenario": "wet-area waterproofing",
        "defects": [
            {"description": "AS 3740 edition is out of date", "cluster": "standards"},
            {"summary": "Applies to Class 1 buildings only", "scenario": "class-1"},
        ],
    }
    resp = await submit(hub, agent, assignment["id"], submission)
    assert resp.status == 200, await resp.text()
    result = await resp.json()
    assert result["accepted"] is True
    assert len(result["defectIds"]) == 2
    assert result["creditsAwarded"] == 1
    assert await balance(hub, agent) == before + 1
    empty = await hub.post(
        "/api/work/claim", json={"workType": "applicability_spotcheck"}, headers=agent["headers"]
    )
    clean = await submit(hub, agent, (await empty.json())["assignment"]["id"], {"checked": True})
    assert (await clean.json())["defectIds"] == []


async def test_a_validator_that_gives_up_leaves_the_decision_to_a_curator(
    hub, market, register, shop, monkeypatch
):
    """When retries run out the job's on_failure defers the submission (never left validating for ever);
    a delivery still running then finds it decided and changes nothing."""
    from domain import wiring
    from domain.kernel import outbox
    from domain.kernel.models import AuditEntry, OutboxJob

    monkeypatch.setattr(get_work_settings(), "submit_wait_seconds", 0)
    agent = await register()
    before = await balance(hub, agent)
    assignment = await claim(hub, agent)
    body = await (await submit(hub, agent, assignment["id"], observation(shop, "slow-giveup"))).json()
    async with market.db.read() as session:
        job_id = await session.scalar(
            select(OutboxJob.id).where(OutboxJob.actor == validator.VALIDATE_JOB.name)
        )
    await outbox.give_up(market.db, job_id, wiring.JOBS)
    await asyncio.sleep(1.5)  # the worker's delivery (slow page) finishes after the give-up
    final = await (await hub.get(body["url"], headers=agent["headers"])).json()
    assert final["status"] == "deferred"
    assert [c["code"] for c in final["checks"]] == ["validator_failed"]
    assert await balance(hub, agent) == before
    async with market.db.read() as session:
        ops = (
            await session.scalars(select(AuditEntry.op).where(AuditEntry.entity_id == body["submissionId"]))
        ).all()
    assert "work.submit" in ops


async def test_no_transaction_is_held_while_the_url_is_checked(
    hub, market, register, aiohttp_server, monkeypatch
):
    """While the retailer holds the validator's request open, the test writes the submission's, the
    assignment's and the job's rows in a transaction that may not wait (tests/lock_probe.py): it succeeds
    only if the job holds no transaction while it waits on the network."""
    monkeypatch.setattr(get_work_settings(), "submit_wait_seconds", 0)
    wrote: list[str] = []

    async def held(request: web.Request) -> web.Response:
        async with market.db.read() as session:
            sub = (await session.scalars(select(WorkSubmission))).one()
            job_id = await session.scalar(
                select(OutboxJob.id).where(OutboxJob.actor == validator.VALIDATE_JOB.name)
            )
        try:
            await write_now(market.db, "work_submissions", [sub.id])
            await write_now(market.db, "work_assignments", [sub.assignment_id])
            await write_now(market.db, "outbox_jobs", [job_id])
            wrote.append("ok")
        except Exception as exc:  # the job held a transaction: the URL check then sees a 500
            wrote.append(f"{type(exc).__name__}: {exc}")
            return web.Response(status=500)
        return web.Response(text="<html><body>paint</body></html>", content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/p/held", held)
    retailer_site = await aiohttp_server(app, host="127.0.0.1")  # the retailer's domain is 127.0.0.1
    agent = await register()
    assignment = await claim(hub, agent)
    resp = await submit(hub, agent, assignment["id"], observation(retailer_site, "held"))
    body = await resp.json()

    async def decided():
        r = await hub.get(body["url"], headers=agent["headers"])
        return r.status == 200 and await r.json()

    final = await eventually(decided, timeout=30)
    assert wrote == ["ok"]
    assert final["status"] == "accepted", final
