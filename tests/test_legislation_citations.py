"""Citing imported legislation (issue 34): the resolver verifies a pinpoint against the compilation in force
at an as-at date, a regulation's `r 5` and `reg 5` are one pinpoint, and a topic proposal can cite a
section (validated, stored pinned to the compilation it was verified against, shown when the topic is
read). Every instrument here is invented."""

from __future__ import annotations

from typing import Any

import pytest

from tests.axiom_helpers import act, axiom_key, ingest, staff_headers
from tests.consensus_helpers import open_topic, propose


def compilation(version_date: str, *sections: tuple[str, str]) -> dict[str, Any]:
    return act(
        "Sprocket Keeping Act 2031",
        "NSW",
        *sections,
        id="nsw-sprocket-keeping-act-2031",
        inForceDate="2031-01-01",
        provenance={"sourceRegister": "nsw", "versionDate": version_date, "licence": "CC BY 4.0"},
    )


FIRST = compilation("2031-01-01", ("s 1", "Short title"), ("s 7", "Old duty"), ("s 7(1)", "Old duty (1)"))
# The second compilation repeals s 7 and adds s 8.
SECOND = compilation("2032-01-01", ("s 1", "Short title"), ("s 8", "New duty"))


async def resolve(hub: Any, citation: str, status: int = 200, **params: str) -> dict[str, Any]:
    resp = await hub.get("/api/axiom/resolve", params={"citation": citation, **params})
    body = await resp.json()
    assert resp.status == status, body
    return body


async def two_compilations(hub: Any, runtime: Any) -> None:
    staff = await staff_headers(runtime)
    await ingest(hub, staff, FIRST)
    await ingest(hub, staff, SECOND)


async def test_as_at_resolves_against_the_compilation_in_force_then(hub, runtime):
    await two_compilations(hub, runtime)
    cite = "Sprocket Keeping Act 2031 (NSW) s 7(1)"
    now = await resolve(hub, cite)
    assert (now["sectionRef"], now["unverifiedPinpoint"]) == (None, "s 7(1)")
    assert now["versionDate"] == "2032-01-01"
    assert now["asAt"] is None
    then = await resolve(hub, cite, asAt="2031-06-30")
    assert (then["sectionRef"], then["unverifiedPinpoint"]) == ("s 7(1)", None)
    assert (then["asAt"], then["versionDate"]) == ("2031-06-30", "2031-01-01")
    assert then["verifiedRef"] == "Sprocket Keeping Act 2031 (NSW) s 7(1)"
    # The new section is not in the old compilation, and is in the new one from its date on.
    early = await resolve(hub, "Sprocket Keeping Act 2031 (NSW) s 8", asAt="2031-12-31")
    assert early["sectionRef"] is None
    later = await resolve(hub, "Sprocket Keeping Act 2031 (NSW) s 8", asAt="2032-01-01")
    assert (later["sectionRef"], later["versionDate"]) == ("s 8", "2032-01-01")


async def test_a_later_import_never_changes_what_an_earlier_date_resolved_to(hub, runtime):
    staff = await staff_headers(runtime)
    await ingest(hub, staff, FIRST)
    cite = "Sprocket Keeping Act 2031 (NSW) s 7"
    before = await resolve(hub, cite, asAt="2031-06-30")
    await ingest(hub, staff, SECOND)
    after = await resolve(hub, cite, asAt="2031-06-30")
    assert after == before
    assert after["sectionRef"] == "s 7"


async def test_as_at_before_any_stored_compilation_and_a_bad_date(hub, runtime):
    await two_compilations(hub, runtime)
    body = await resolve(hub, "Sprocket Keeping Act 2031 (NSW) s 1", 404, asAt="2030-12-31")
    assert body["error"] == "version_not_found"
    assert "2030-12-31" in body["detail"]
    bad = await resolve(hub, "Sprocket Keeping Act 2031 (NSW) s 1", 400, asAt="last tuesday")
    assert "asAt" in bad["detail"]


REGULATION = act(
    "Sprocket Keeping Regulation 2031",
    "NSW",
    ("reg 5", "Forms"),
    ("reg 5(1)", "Forms (1)"),
    id="nsw-sprocket-keeping-regulation-2031",
    type="regulation",
)
RULES = act(
    "Sprocket Court Rules 2031",
    "NSW",
    ("r 3", "Filing"),
    id="nsw-sprocket-court-rules-2031",
    type="regulation",
)


async def test_reg_and_r_are_both_accepted_and_the_stored_one_is_answered(hub, runtime):
    await ingest(hub, await staff_headers(runtime), REGULATION, RULES)
    for written in ("reg 5(1)", "r 5(1)", "regulation 5(1)"):
        body = await resolve(hub, f"Sprocket Keeping Regulation 2031 (NSW) {written}")
        assert (body["sectionRef"], body["unverifiedPinpoint"]) == ("reg 5(1)", None), written
        assert body["verifiedRef"] == "Sprocket Keeping Regulation 2031 (NSW) reg 5(1)"
    partly = await resolve(hub, "Sprocket Keeping Regulation 2031 (NSW) r 5(2)")
    assert (partly["sectionRef"], partly["verifiedRef"]) == (
        "reg 5",
        "Sprocket Keeping Regulation 2031 (NSW) reg 5",
    )
    assert partly["unverifiedPinpoint"] == "(2)"
    rule = await resolve(hub, "Sprocket Court Rules 2031 (NSW) reg 3")
    assert (rule["sectionRef"], rule["verifiedRef"]) == ("r 3", "Sprocket Court Rules 2031 (NSW) r 3")
    # The instrument read takes either spelling too.
    key = await axiom_key(hub)
    resp = await hub.get(
        "/api/axiom/legislation/nsw-sprocket-keeping-regulation-2031",
        params={"section": "r 5"},
        headers=key["headers"],
    )
    body = await resp.json()
    assert resp.status == 200, body
    assert [s["sectionId"] for s in body["legislation"]["sections"]] == ["reg 5"]


# --- topics citing imported sections ------------------------------------------------------------------


async def test_a_proposal_cites_an_imported_section_and_the_topic_shows_it(hub, runtime, register):
    staff = await staff_headers(runtime)
    await ingest(hub, staff, FIRST, REGULATION)
    topic_id, (author, *_rest) = await open_topic(hub, register)
    proposal = await propose(
        hub,
        topic_id,
        author,
        citations=[
            "legislation:nsw-sprocket-keeping-act-2031 s 7(1)",
            "legislation:Sprocket Keeping Regulation 2031 (NSW) r 5",
            "https://example.org/commentary",
        ],
    )
    # Stored in one form, pinned to the compilation verified against; other citations as sent.
    assert proposal["citations"] == [
        "legislation:nsw-sprocket-keeping-act-2031 s 7(1)@2031-01-01",
        "legislation:nsw-sprocket-keeping-regulation-2031 reg 5",
        "https://example.org/commentary",
    ]
    # A newer compilation repeals s 7: the topic still shows what was cited, from the kept version.
    await ingest(hub, staff, SECOND)
    resp = await hub.get(f"/api/pact/topics/{topic_id}")
    topic = await resp.json()
    assert resp.status == 200, topic
    act_cite, reg_cite = topic["legislationCitations"]
    assert act_cite["proposalId"] == proposal["id"]
    assert (act_cite["proposalStatus"], act_cite["topicSectionId"]) == ("pending", "sec:answer")
    assert (act_cite["docId"], act_cite["sectionRef"], act_cite["versionDate"]) == (
        "nsw-sprocket-keeping-act-2031",
        "s 7(1)",
        "2031-01-01",
    )
    assert act_cite["verifiedRef"] == "Sprocket Keeping Act 2031 (NSW) s 7(1)"
    assert (act_cite["sectionTitle"], act_cite["current"]) == ("Old duty (1)", False)
    assert (reg_cite["sectionRef"], reg_cite["sectionTitle"], reg_cite["current"]) == ("reg 5", "Forms", True)
    # A section of the current compilation, cited as at a date the old one was in force, is refused.
    body = await propose(
        hub,
        topic_id,
        author,
        expect=400,
        citations=["legislation:nsw-sprocket-keeping-act-2031 s 8 @2031-06-30"],
    )
    assert body["error"] == "invalid_citation"
    assert "s 8" in body["detail"]
    assert "2031-06-30" in body["detail"]
    cited_then = await propose(
        hub, topic_id, author, citations=["legislation:nsw-sprocket-keeping-act-2031 s 7 @2031-06-30"]
    )
    assert cited_then["citations"] == ["legislation:nsw-sprocket-keeping-act-2031 s 7@2031-01-01"]


@pytest.mark.parametrize(
    ("citation", "words"),
    [
        ("legislation:nsw-sprocket-keeping-act-2031 s 99", "has no s 99"),
        ("legislation:nsw-sprocket-keeping-act-2031 s 7(1)(a)", "has no s 7(1)(a)"),
        ("legislation:nsw-sprocket-keeping-act-2031", "name a section"),
        ("legislation:nsw-sprocket-keeping-act-2031 ss 1-7", "not a range"),
        ("legislation:nsw-no-such-act-2031 s 1", "no imported instrument"),
        ("legislation:Sprocket Keeping Act 2031 (Vic) s 1", "no imported instrument"),
        ("legislation:", "name an instrument"),
        ("legislation:nsw-sprocket-keeping-act-2031 s 1 @soon", "not a date"),
        ("legislation:nsw-sprocket-keeping-act-2031 s 1 @2020-01-01", "as at 2020-01-01"),
    ],
)
async def test_a_citation_of_no_imported_section_is_a_clear_400(hub, runtime, register, citation, words):
    await ingest(hub, await staff_headers(runtime), FIRST)
    topic_id, (author, *_rest) = await open_topic(hub, register)
    body = await propose(hub, topic_id, author, expect=400, citations=["a free citation", citation])
    assert (body["error"], body["field"]) == ("invalid_citation", "citations")
    assert body["detail"].startswith("citations[1]")
    assert words in body["detail"], body["detail"]
    listed = await (await hub.get(f"/api/pact/{topic_id}/proposals")).json()
    assert listed["total"] == 0


async def test_a_citation_of_a_title_several_jurisdictions_hold_lists_them(hub, runtime, register):
    """The 400 names the instruments the title may mean, as the resolver's 404 does (candidates)."""
    staff = await staff_headers(runtime)
    await ingest(hub, staff, FIRST, act("Sprocket Keeping Act 2031", "Vic", ("s 1", "Short title")))
    topic_id, (author, *_rest) = await open_topic(hub, register)
    body = await propose(
        hub, topic_id, author, expect=400, citations=["legislation:Sprocket Keeping Act 2031 s 1"]
    )
    assert (body["error"], body["field"]) == ("invalid_citation", "citations")
    assert [(c["docId"], c["jurisdictionAbbreviation"]) for c in body["candidates"]] == [
        ("nsw-sprocket-keeping-act-2031", "NSW"),
        ("vic-sprocket-keeping-act-2031", "Vic"),
    ]
    assert body["candidates"][0] == {
        "docId": "nsw-sprocket-keeping-act-2031",
        "docType": "act",
        "title": "Sprocket Keeping Act 2031",
        "jurisdiction": "AU-NSW",
        "jurisdictionAbbreviation": "NSW",
        "verifiedRef": "Sprocket Keeping Act 2031 (NSW)",
        "inForce": True,
    }
    resolved = await resolve(hub, "Sprocket Keeping Act 2031 s 1", 404)
    assert resolved["candidates"] == body["candidates"]
    assert resolved["parsed"] == {
        "kind": "legislation",
        "title": "Sprocket Keeping Act 2031",
        "designation": None,
        "jurisdiction": None,
        "section": "s 1",
    }
