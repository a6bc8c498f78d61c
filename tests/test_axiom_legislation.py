"""Axiom legislation: listing, search, one instrument, staff ingest, and the seeded sample."""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from typing import Any

import pytest

from domain.axiom.seed import seed_legislation
from tests.axiom_helpers import act, axiom_key, ingest, staff_headers


@pytest.fixture
async def seeded(runtime):
    async with runtime.db.transaction() as session:
        await seed_legislation(session)
    return runtime


@pytest.fixture
async def key(hub):
    return await axiom_key(hub)


async def get(hub, key, path, status=200, **params):
    resp = await hub.get(path, params=params, headers=key["headers"])
    body = await resp.json() if resp.content_type == "application/json" else await resp.text()
    assert resp.status == status, body
    return body


def test_sample_is_real_and_large_enough():
    raw = resources.files("domain").joinpath("data", "legislation_sample.json").read_text(encoding="utf-8")
    docs = json.loads(raw)["documents"]
    assert len(docs) >= 60
    whs = {d["jurisdiction"] for d in docs if d["title"] == "Work Health and Safety Act 2011"}
    assert whs == {"AU", "AU-NSW", "AU-QLD", "AU-ACT"}
    designations = {d.get("designation") for d in docs}
    assert {"AS/NZS 3000:2018", "AS 3600:2018", "AS/NZS 1170.0:2002"} <= designations
    assert all(not s.get("content") for d in docs for s in d["sections"])  # headings only, no text


async def test_seed_is_idempotent(runtime):
    async with runtime.db.transaction() as session:
        first = await seed_legislation(session)
    async with runtime.db.transaction() as session:
        second = await seed_legislation(session)
    assert first >= 60
    assert second == 0


async def test_listing_filters_and_paginates(hub, seeded, key):
    body = await get(hub, key, "/api/axiom/legislation")
    assert body["limit"] == 20
    assert body["offset"] == 0
    assert len(body["legislation"]) == 20
    assert body["total"] >= 100
    assert body["creditsRemaining"] == 999
    nsw = await get(hub, key, "/api/axiom/legislation", jurisdiction="AU-NSW", limit=100)
    assert nsw["total"] >= 10
    assert {d["jurisdiction"] for d in nsw["legislation"]} == {"AU-NSW"}
    assert {
        d["jurisdiction"]
        for d in (await get(hub, key, "/api/axiom/legislation", jurisdiction="NSW"))["legislation"]
    } == {"AU-NSW"}
    everything = await get(hub, key, "/api/axiom/legislation", jurisdiction="AU", limit=1)
    assert everything["total"] == body["total"]  # AU is a prefix of every AU-… code
    standards = await get(hub, key, "/api/axiom/legislation", type="standard", limit=100)
    assert {d["type"] for d in standards["legislation"]} == {"standard"}
    whs = await get(hub, key, "/api/axiom/legislation", q="work health safety 2011")
    assert {d["jurisdiction"] for d in whs["legislation"]} == {"AU", "AU-NSW", "AU-QLD", "AU-ACT", "AU-NT"}
    page2 = await get(hub, key, "/api/axiom/legislation", limit=20, offset=20)
    assert {d["id"] for d in page2["legislation"]}.isdisjoint({d["id"] for d in body["legislation"]})


async def test_listing_include_sections_and_amendments(hub, seeded, key):
    body = await get(
        hub,
        key,
        "/api/axiom/legislation",
        q="Work Health and Safety Act 2011",
        jurisdiction="AU-QLD",
        include="sections,amendments",
    )
    (doc,) = body["legislation"]
    assert doc["title"] == "Work Health and Safety Act 2011"
    assert doc["number"] == "18"
    assert doc["inForceDate"] == "2012-01-01"
    assert doc["citation"] == "Work Health and Safety Act 2011 (Qld)"
    assert any(s["sectionId"] == "s 19" and s["title"] == "Primary duty of care" for s in doc["sections"])
    assert doc["amendments"][0]["title"] == "Work Health and Safety and Other Legislation Amendment Act 2017"
    plain = await get(
        hub, key, "/api/axiom/legislation", jurisdiction="AU-QLD", q="Work Health and Safety Act 2011"
    )
    assert "sections" not in plain["legislation"][0]


async def test_listing_as_markdown(hub, seeded, key):
    resp = await hub.get(
        "/api/axiom/legislation",
        params={"format": "markdown", "include": "sections", "q": "Privacy Act 1988"},
        headers=key["headers"],
    )
    assert resp.status == 200
    assert resp.content_type == "text/markdown"
    text = await resp.text()
    assert text.startswith("# Privacy Act 1988 (Cth)")
    assert "## s 14 Australian Privacy Principles" in text
    assert resp.headers["X-Credits-Remaining"] == "999"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"type": "bylaw"}, "type"),
        ({"format": "pdf"}, "format"),
        ({"include": "sections,texts"}, "include"),
        ({"limit": "0"}, "limit"),
        ({"limit": "abc"}, "limit"),
        ({"offset": "-1"}, "offset"),
        ({"jurisdiction": "AU NSW!"}, "jurisdiction"),
    ],
)
async def test_listing_bad_input_is_400_naming_the_field(hub, key, params, field):
    resp = await hub.get("/api/axiom/legislation", params=params, headers=key["headers"])
    assert resp.status == 400
    assert field in (await resp.json())["detail"]


async def test_get_by_id_and_section(hub, seeded, key):
    body = await get(hub, key, "/api/axiom/legislation/nsw-work-health-and-safety-act-2011")
    doc = body["legislation"]
    assert doc["registerId"] == "act-2011-010"
    assert body["sectionCount"] == len(doc["sections"]) >= 5
    one = await get(hub, key, "/api/axiom/legislation/nsw-work-health-and-safety-act-2011", section="s 19")
    assert [s["sectionId"] for s in one["legislation"]["sections"]] == ["s 19"]
    assert one["legislation"]["citation"] == "Work Health and Safety Act 2011 (NSW) s 19"
    again = await get(
        hub, key, "/api/axiom/legislation/nsw-work-health-and-safety-act-2011", section="section 19"
    )
    assert again["legislation"]["sections"][0]["title"] == "Primary duty of care"
    missing = await get(
        hub, key, "/api/axiom/legislation/nsw-work-health-and-safety-act-2011", status=404, section="s 999"
    )
    assert missing["error"] == "section_not_found"
    nodoc = await get(hub, key, "/api/axiom/legislation/nsw-no-such-act-1999", status=404)
    assert nodoc["error"] == "legislation_not_found"
    std = await get(hub, key, "/api/axiom/legislation/std-as-nzs-3000-2018")
    assert std["legislation"]["designation"] == "AS/NZS 3000:2018"
    resp = await hub.get(
        "/api/axiom/legislation/cth-privacy-act-1988", params={"format": "markdown"}, headers=key["headers"]
    )
    assert resp.content_type == "text/markdown"


async def test_search_scores_and_documents_parameters(hub, seeded, key, runtime):
    headers = await staff_headers(runtime)
    await ingest(
        hub,
        headers,
        {
            "title": "Dividing Fences Act 1991",
            "jurisdiction": "NSW",
            "type": "act",
            "year": 1991,
            "sections": [
                {
                    "sectionId": "s 7",
                    "title": "Contributions to dividing fences",
                    "content": "Adjoining owners contribute in equal proportions to a dividing fence "
                    "of a sufficient standard.",
                },
                {
                    "sectionId": "s 8",
                    "title": "Notice to carry out fencing work",
                    "content": "An owner may serve a fencing notice. The notice must describe the fence "
                    "and the fencing work.",
                },
            ],
        },
    )
    body = await get(hub, key, "/api/axiom/legislation/search", q="fencing notice")
    assert body["keywords"] == ["fencing", "notice"]
    top = body["results"][0]
    assert top["sectionId"] == "s 8"
    assert top["docId"] == "nsw-dividing-fences-act-1991"
    assert "**notice**" in top["content"]
    assert top["relevanceScore"] > 0
    assert top["citation"] == "Dividing Fences Act 1991 (NSW) s 8"
    assert [r["relevanceScore"] for r in body["results"]] == sorted(
        (r["relevanceScore"] for r in body["results"]), reverse=True
    )
    heading_only = await get(
        hub, key, "/api/axiom/legislation/search", q="primary duty care", jurisdiction="AU-QLD"
    )
    assert {(r["docTitle"], r["sectionId"]) for r in heading_only["results"]} == {
        ("Work Health and Safety Act 2011", "s 19")
    }
    assert (await get(hub, key, "/api/axiom/legislation/search", q="zzzznothing"))["total"] == 0
    bad = await get(hub, key, "/api/axiom/legislation/search", status=400, q="of a")
    assert bad["field"] == "q"
    missing = await get(hub, key, "/api/axiom/legislation/search", status=400)
    assert "q" in missing["detail"]


async def test_ingest_requires_a_staff_key(hub, register, key):
    doc = act("Staff Only Act 2020", "NSW")
    resp = await hub.post("/api/axiom/legislation/ingest", json={"documents": [doc]})
    assert resp.status == 401
    agent = await register()
    for headers in (agent["headers"], key["headers"], {"Authorization": "Bearer staff_sk_nope"}):
        resp = await hub.post("/api/axiom/legislation/ingest", json={"documents": [doc]}, headers=headers)
        assert resp.status == 401


async def test_ingest_upserts_and_validates(hub, runtime, key):
    headers = await staff_headers(runtime)
    result = await ingest(
        hub, headers, act("Dividing Fences Act 1991", "NSW", ("s 1", "Name of Act"), year=1991)
    )
    assert result["created"] == ["nsw-dividing-fences-act-1991"]
    again = await ingest(
        hub, headers, act("Dividing Fences Act 1991", "NSW", ("s 1", "Name of Act"), year=1991)
    )
    assert again["unchanged"] == ["nsw-dividing-fences-act-1991"]
    changed = await ingest(
        hub,
        headers,
        act("Dividing Fences Act 1991", "NSW", ("s 1", "Name of Act"), ("s 7", "Contributions"), year=1991),
    )
    assert changed["updated"] == ["nsw-dividing-fences-act-1991"]
    doc = await get(hub, key, "/api/axiom/legislation/nsw-dividing-fences-act-1991")
    assert [s["sectionId"] for s in doc["legislation"]["sections"]] == ["s 1", "s 7"]
    bad_bodies = [
        ({"documents": []}, "documents"),
        ({"documents": [{"title": "X Act 2000", "type": "act"}]}, "jurisdiction"),
        ({"documents": [act("X Act 2000", "Narnia")]}, "jurisdiction"),
        ({"documents": [act("X Act 2000", "NSW", type="bylaw")]}, "type"),
        ({"documents": [{"title": "Concrete", "jurisdiction": "AU", "type": "standard"}]}, "designation"),
        ({"documents": [act("X Act 2000", "NSW", ("s 1", "A"), ("s 1", "B"))]}, "s 1"),
        ({"documents": [act("X Act 2000", "NSW", id="Bad Id!")]}, "id"),
    ]
    for body, field in bad_bodies:
        resp = await hub.post("/api/axiom/legislation/ingest", json=body, headers=headers)
        assert resp.status == 400, body
        assert field in (await resp.json())["detail"]
    resp = await hub.post(
        "/api/axiom/legislation/ingest",
        data="not json",
        headers={**headers, "Content-Type": "application/json"},
    )
    assert resp.status == 400


async def test_ingest_takes_the_longest_ids_and_refuses_coerced_values(hub, runtime, key):
    """An instrument id of 120 characters (the longest an id may be) is stored and audited on both databases
    (the audit column was shorter: a 500 on PostgreSQL), and a value of another JSON type is a 400 naming the
    field rather than coerced (a number is not a date, a string not an integer)."""
    headers = await staff_headers(runtime)
    long_id = "x" * 120
    result = await ingest(hub, headers, act("Long Identifier Act 2001", "Vic", ("s 1", "Name"), id=long_id))
    assert result["created"] == [long_id]
    long_title = "A" * 200  # the default id is the jurisdiction and the title's slug, cut at 120
    result = await ingest(hub, headers, act(long_title, "Vic"))
    assert len(result["created"][0]) == 120
    coerced: list[tuple[dict[str, Any], str]] = [
        ({"amendments": [{"title": "Amending Act 2002", "commenced": 0}]}, "commenced"),
        ({"year": "2001"}, "year"),
        ({"sections": [{"sectionId": "s 1", "title": "Name", "order": 2_147_483_648}]}, "order"),
    ]
    for extra, field in coerced:
        body = {"documents": [{**act("Coerced Act 2001", "Vic"), **extra}]}
        resp = await hub.post("/api/axiom/legislation/ingest", json=body, headers=headers)
        assert resp.status == 400, (extra, await resp.text())
        assert field in (await resp.json())["field"]


async def test_concurrent_ingests_of_one_instrument(hub, runtime, key):
    headers = await staff_headers(runtime)
    docs = [
        act("Dividing Fences Act 1991", "NSW", ("s 1", "Name of Act"), (f"s {i + 2}", f"Heading {i}"))
        for i in range(6)
    ]
    responses = await asyncio.gather(
        *(hub.post("/api/axiom/legislation/ingest", json={"documents": [d]}, headers=headers) for d in docs)
    )
    assert [r.status for r in responses] == [200] * 6
    doc = (await get(hub, key, "/api/axiom/legislation/nsw-dividing-fences-act-1991"))["legislation"]
    assert len(doc["sections"]) == 2


def compiled(title: str, version: str, *sections: tuple[str, str, str], **extra: Any) -> dict[str, Any]:
    """An act as a register compiles it: provenance with the compilation's date, sections with text."""
    doc = act(title, "NSW", **extra)
    doc["provenance"] = {"sourceRegister": "nsw", "versionDate": version}
    doc["sections"] = [
        {"sectionId": sid, "title": heading, "content": text} for sid, heading, text in sections
    ]
    return doc


async def test_one_batch_mixing_new_changed_unchanged_older_and_repeated_instruments(hub, runtime, key):
    """What ingest does with each instrument of one batch, written together: the result lists in the
    batch's order, an id met twice applied twice in turn (each replace keeping the version it replaces and
    marking what the new compilation changed), an older compilation kept as a version only, an unchanged
    one left alone, amendments replaced, and one audit entry per instrument written."""
    from sqlalchemy import select

    from domain.kernel.models import AuditEntry

    headers = await staff_headers(runtime)
    gate = compiled("Gate Act 1990", "2020-01-01", ("s 1", "Name", "This is the Gate Act."))
    fence = compiled(
        "Fence Act 1991",
        "2020-01-01",
        ("s 1", "Name", "This is the Fence Act."),
        ("s 2", "Height", "A fence is 2 m high."),
        amendments=[{"title": "Fence Amendment Act 2019"}],
    )
    wall = compiled("Wall Act 1992", "2020-01-01", ("s 1", "Name", "This is the Wall Act."))
    first = await ingest(hub, headers, gate, fence, wall)
    assert first["created"] == ["nsw-gate-act-1990", "nsw-fence-act-1991", "nsw-wall-act-1992"]

    fence_2021 = compiled(
        "Fence Act 1991",
        "2021-01-01",
        ("s 1", "Name", "This is the Fence Act."),
        ("s 2", "Height", "A fence is 3 m high."),
        amendments=[{"title": "Fence Amendment Act 2020"}],
    )
    fence_2022 = compiled(
        "Fence Act 1991",
        "2022-01-01",
        ("s 1", "Name", "This is the Fence Act."),
        ("s 2", "Height", "A fence is 3 m high."),
        ("s 3", "Paint", "A fence is painted."),
        amendments=[{"title": "Fence Amendment Act 2021"}, {"title": "Fence Paint Act 2021"}],
    )
    wall_2019 = compiled("Wall Act 1992", "2019-01-01", ("s 1", "Name", "This was the Wall Act."))
    post = compiled("Post Act 1993", "2020-01-01", ("s 1", "Name", "This is the Post Act."))
    second = await ingest(hub, headers, post, fence_2021, gate, wall_2019, fence_2022)
    assert second == {
        "created": ["nsw-post-act-1993"],
        "updated": ["nsw-fence-act-1991", "nsw-fence-act-1991"],
        "unchanged": ["nsw-gate-act-1990"],
        "versioned": ["nsw-wall-act-1992"],
        "count": 3,
    }

    fence_now = (await get(hub, key, "/api/axiom/legislation/nsw-fence-act-1991", include="amendments"))[
        "legislation"
    ]
    assert fence_now["versions"] == ["2020-01-01", "2021-01-01", "2022-01-01"]
    assert [(s["sectionId"], s["content"], s["amendedBy"]) for s in fence_now["sections"]] == [
        ("s 1", "This is the Fence Act.", None),
        ("s 2", "A fence is 3 m high.", None),  # as the 2021 compilation had it
        ("s 3", "A fence is painted.", "compilation of 2022-01-01"),
    ]
    assert [a["title"] for a in fence_now["amendments"]] == [
        "Fence Amendment Act 2021",
        "Fence Paint Act 2021",
    ]
    fence_2021_kept = (await get(hub, key, "/api/axiom/legislation/nsw-fence-act-1991", asAt="2021-06-30"))[
        "legislation"
    ]
    assert [(s["sectionId"], s["content"], s["amendedBy"]) for s in fence_2021_kept["sections"]] == [
        ("s 1", "This is the Fence Act.", None),
        ("s 2", "A fence is 3 m high.", "compilation of 2021-01-01"),
    ]
    wall_now = (await get(hub, key, "/api/axiom/legislation/nsw-wall-act-1992"))["legislation"]
    assert wall_now["sections"][0]["content"] == "This is the Wall Act."
    assert wall_now["versions"] == ["2019-01-01", "2020-01-01"]
    gate_now = (await get(hub, key, "/api/axiom/legislation/nsw-gate-act-1990"))["legislation"]
    assert gate_now["versions"] == ["2020-01-01"]
    post_now = (await get(hub, key, "/api/axiom/legislation/nsw-post-act-1993"))["legislation"]
    assert post_now["sections"][0]["content"] == "This is the Post Act."

    async with runtime.db.transaction() as session:
        entries = list(
            await session.scalars(
                select(AuditEntry).where(AuditEntry.op == "legislation.ingest").order_by(AuditEntry.id)
            )
        )
    written = [(e.entity_id, json.loads(e.after_json or "{}")) for e in entries[3:]]
    assert [
        (doc_id, after["sections"], after["amendments"], after["versionDate"]) for doc_id, after in written
    ] == [
        ("nsw-post-act-1993", 1, 0, "2020-01-01"),
        ("nsw-fence-act-1991", 2, 1, "2021-01-01"),
        ("nsw-fence-act-1991", 3, 2, "2022-01-01"),
    ]


async def test_concurrent_batches_sharing_new_instruments_in_opposite_orders(hub, runtime, key):
    """Batches creating the same instruments, listed in opposite orders, wait for one another (their rows
    are written in id order) instead of deadlocking: every request succeeds and each instrument ends with
    one batch's sections."""
    headers = await staff_headers(runtime)
    titles = [f"Hedge {n} Act 1994" for n in ("Alder", "Beech", "Cedar", "Damson")]

    def batch(i: int) -> list[dict[str, Any]]:
        docs = [act(t, "NSW", ("s 1", "Name"), (f"s {i + 2}", f"Heading {i}")) for t in titles]
        return docs if i % 2 else docs[::-1]

    responses = await asyncio.gather(
        *(
            hub.post("/api/axiom/legislation/ingest", json={"documents": batch(i)}, headers=headers)
            for i in range(6)
        )
    )
    assert [r.status for r in responses] == [200] * 6, [await r.text() for r in responses]
    slugs = ["nsw-" + title.lower().replace(" ", "-") for title in titles]
    for r in responses:  # each batch wrote all four, in its own order
        result = await r.json()
        assert sorted(result["created"] + result["updated"]) == slugs, result
    for slug in slugs:
        doc = (await get(hub, key, f"/api/axiom/legislation/{slug}"))["legislation"]
        assert len(doc["sections"]) == 2
