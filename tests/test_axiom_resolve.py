"""GET /api/axiom/resolve: the spec's eight rules, with real titles from the seeded sample."""

from __future__ import annotations

import pytest

from domain.axiom import legislation
from domain.axiom.seed import seed_legislation
from domain.kernel.context import SYSTEM
from tests.axiom_helpers import act, ingest, make_fact, staff_headers
from tests.waiting import eventually


@pytest.fixture
async def seeded(runtime):
    async with runtime.db.transaction() as session:
        await seed_legislation(session)
    return runtime


async def resolve(hub, citation, status=200, **headers):
    resp = await hub.get("/api/axiom/resolve", params={"citation": citation}, headers=headers)
    body = await resp.json()
    assert resp.status == status, (citation, body)
    return body


# Rule 1: Title Year (Jurisdiction) Pinpoint, or a standards designation ---------------------------


async def test_title_jurisdiction_and_section(hub, seeded):
    r = await resolve(hub, "Work Health and Safety Act 2011 (Cth) s 19")
    assert r["resolved"] is True
    assert r["docId"] == "cth-work-health-and-safety-act-2011"
    assert r["docType"] == "act"
    assert r["sectionRef"] == "s 19"
    assert r["canonicalTitle"] == "Work Health and Safety Act 2011"
    assert r["verifiedRef"] == "Work Health and Safety Act 2011 (Cth) s 19"
    assert r["jurisdiction"] == "AU"
    assert r["matchTier"] == "exact"
    assert r["source"] == "legislation"
    assert r["free"] is True
    assert r["inForce"] is True


@pytest.mark.parametrize(
    ("citation", "jurisdiction"),
    [
        ("Privacy Act 1988 (Cth)", "AU"),
        ("Home Building Act 1989 (NSW)", "AU-NSW"),
        ("Charter of Human Rights and Responsibilities Act 2006 (Vic)", "AU-VIC"),
        ("Human Rights Act 2019 (Qld)", "AU-QLD"),
        ("Work Health and Safety Act 2020 (WA)", "AU-WA"),
        ("Criminal Law Consolidation Act 1935 (SA)", "AU-SA"),
        ("Criminal Code Act 1924 (Tas)", "AU-TAS"),
        ("Human Rights Act 2004 (ACT)", "AU-ACT"),
        ("Criminal Code Act 1983 (NT)", "AU-NT"),
        ("Evidence Act 1995 (AU-NSW)", "AU-NSW"),
        ("Evidence Act 1995 (AU)", "AU"),
        ("Defamation Act 2005 (QLD)", "AU-QLD"),
        ("Defamation Act 2005 (au-vic)", "AU-VIC"),
        ("Crimes Act 1900 (ACT)", "AU-ACT"),
    ],
)
async def test_every_aglc_abbreviation_and_au_code(hub, seeded, citation, jurisdiction):
    r = await resolve(hub, citation)
    assert r["jurisdiction"] == jurisdiction
    assert r["sectionRef"] is None


@pytest.mark.parametrize(
    ("citation", "section"),
    [
        ("Work Health and Safety Act 2011 (NSW) s 19", "s 19"),
        ("Work Health and Safety Act 2011 (NSW) s 19(2)", "s 19"),
        ("Work Health and Safety Act 2011 (NSW) s 19(2)(a)", "s 19"),
        ("Work Health and Safety Act 2011 (NSW), s 19", "s 19"),
        ("Work Health and Safety Act 2011 (NSW) section 19", "s 19"),
        ("Work Health and Safety Act 2011 (NSW) s. 19", "s 19"),
        ("Racial Discrimination Act 1975 (Cth) s 18C", "s 18C"),
        ("Corporations Act 2001 (Cth) s 588G(2)", "s 588G"),
        ("Income Tax Assessment Act 1997 (Cth) s 8-1", "s 8-1"),
        ("Environmental Planning and Assessment Act 1979 (NSW) s 4.15", "s 4.15"),
        ("Fair Work Regulations 2009 (Cth) reg 1.01", "reg 1.01"),
    ],
)
async def test_section_pinpoints(hub, seeded, citation, section):
    r = await resolve(hub, citation)
    assert r["sectionRef"] == section
    assert r["verifiedRef"].endswith(f") {section}")


async def test_subsection_reports_the_pinpoint_asked_for(hub, seeded):
    r = await resolve(hub, "Work Health and Safety Act 2011 (Qld) s 19(2)(a)")
    assert r["requestedSection"] == "s 19(2)(a)"
    assert r["sectionRef"] == "s 19"
    assert r["verifiedRef"] == "Work Health and Safety Act 2011 (Qld) s 19"


async def test_title_containing_parentheses_is_not_a_jurisdiction(hub, seeded):
    r = await resolve(hub, "Work Health and Safety (National Uniform Legislation) Act 2011 (NT) s 19")
    assert r["jurisdiction"] == "AU-NT"
    assert r["sectionRef"] == "s 19"
    r = await resolve(hub, "Evidence (National Uniform Legislation) Act 2011")
    assert r["jurisdiction"] == "AU-NT"


async def test_regulation_title_ending_in_its_year_is_not_a_pinpoint(hub, seeded):
    r = await resolve(hub, "Work Health and Safety Regulation 2017")
    assert r["docType"] == "regulation"
    assert r["jurisdiction"] == "AU-NSW"


# Standards designations -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("citation", "designation", "tier"),
    [
        ("AS/NZS 3000:2018", "AS/NZS 3000:2018", "exact"),
        ("AS 3600:2018", "AS 3600:2018", "exact"),
        ("AS/NZS 1170.0:2002", "AS/NZS 1170.0:2002", "exact"),
        ("AS 1170.4-2007", "AS 1170.4-2007", "exact"),
        ("AS 1170.4:2007", "AS 1170.4-2007", "near-exact"),
        ("AS 3600-2009", "AS 3600-2009", "exact"),
        ("AS 3600\u20142009", "AS 3600-2009", "near-exact"),
        ("AS3600-2018", "AS 3600:2018", "near-exact"),
        ("as/nzs 3000:2018", "AS/NZS 3000:2018", "near-exact"),
        ("AS ISO 31000:2018", "AS ISO 31000:2018", "exact"),
        ("AS/NZS ISO 31000:2009", "AS/NZS ISO 31000:2009", "exact"),
        (
            "AS/NZS 3000:2018 Electrical installations (known as the Australian/New Zealand Wiring Rules)",
            "AS/NZS 3000:2018",
            "exact",
        ),
    ],
)
async def test_standards_designations(hub, seeded, citation, designation, tier):
    r = await resolve(hub, citation)
    assert r["docType"] == "standard"
    assert r["verifiedRef"] == designation
    assert r["canonicalTitle"].startswith(designation + " ")
    assert r["matchTier"] == tier
    assert r["inForce"] is None


async def test_standard_with_its_title(hub, seeded):
    r = await resolve(hub, "AS/NZS 3000:2018 Electrical installations")
    assert r["matchTier"] == "near-exact"
    assert r["docId"] == "std-as-nzs-3000-2018"
    # a designation with another standard's title is not this standard
    r = await resolve(hub, "AS 3600:2018 Steel structures", status=404)
    assert r["error"] == "citation_not_resolved"


async def test_standard_clause_pinpoint(hub, seeded):
    r = await resolve(hub, "AS/NZS 3000:2018 cl 1.4")
    assert r["sectionRef"] == "cl 1.4"
    assert r["verifiedRef"] == "AS/NZS 3000:2018 cl 1.4"


async def test_as_nzs_is_never_read_as_as(hub, seeded):
    r = await resolve(hub, "AS/NZS 1170.0:2002")
    assert r["docId"] == "std-as-nzs-1170-0-2002"
    # there is no AS-only 1170.0 in the store: it must not resolve to the joint standard
    r = await resolve(hub, "AS 1170.0:2002", status=404)
    assert r["error"] == "citation_not_resolved"
    assert r["parsed"]["designation"] == "AS 1170.0:2002"
    # and a joint designation must not resolve to an AS-only standard
    r = await resolve(hub, "AS/NZS 3600:2018", status=404)
    assert r["error"] == "citation_not_resolved"


async def test_standard_year_is_never_guessed(hub, seeded):
    r = await resolve(hub, "AS/NZS 3000", status=404)
    assert r["error"] == "citation_not_resolved"
    r = await resolve(hub, "AS 3600:2019", status=404)
    assert r["error"] == "citation_not_resolved"


# Rules 2 and 3: exact first, then near-exact; never fuzzy; legislation before topics --------------


@pytest.mark.parametrize(
    "citation",
    [
        "work health and safety act 2011 (Cth)",
        "WORK HEALTH AND SAFETY ACT 2011 (CTH)",
        "Work  Health and   Safety Act 2011 (Cth)",
        "Work Health & Safety Act 2011 (Cth)",
        "Work Health and Safety Act, 2011 (Cth)",
        "*Work Health and Safety Act 2011* (Cth)",
    ],
)
async def test_near_exact_matches(hub, seeded, citation):
    r = await resolve(hub, citation)
    assert r["docId"] == "cth-work-health-and-safety-act-2011"
    assert r["matchTier"] == ("exact" if citation.startswith("*") else "near-exact")


async def test_near_exact_punctuation_in_titles(hub, seeded):
    r = await resolve(hub, "Anti Discrimination Act 1977 (NSW)")
    assert r["matchTier"] == "near-exact"
    assert r["canonicalTitle"] == "Anti-Discrimination Act 1977"
    r = await resolve(hub, "A New Tax System (Goods & Services Tax) Act 1999")
    assert r["canonicalTitle"] == "A New Tax System (Goods and Services Tax) Act 1999"


@pytest.mark.parametrize(
    "citation",
    [
        "Work Health and Safety Act (Cth)",  # no year
        "Work Health Safety Act 2011 (Cth)",  # a word missing
        "Work Health and Safety Act 2011 Amendment (Cth)",  # a word added
        "Privacy Act 1998 (Cth)",  # wrong year
        "Privacy Act",
        "Privcy Act 1988 (Cth)",  # a typo: never fuzzy
        "WHS Act 2011 (NSW) s 19",  # abbreviations are not titles
    ],
)
async def test_never_fuzzy(hub, seeded, citation):
    r = await resolve(hub, citation, status=404)
    assert r["error"] == "citation_not_resolved"
    assert r["resolved"] is False
    assert r["detail"]


async def test_title_known_elsewhere_but_not_in_the_cited_jurisdiction(hub, seeded):
    r = await resolve(hub, "Work Health and Safety Act 2011 (Vic)", status=404)
    assert r["error"] == "citation_not_resolved"
    assert "Cth" in r["hint"]


async def test_legislation_is_matched_before_topics(hub, seeded, register):
    agent = await register()
    await make_fact(hub, seeded, agent["headers"], title="Privacy Act 1988")
    r = await resolve(hub, "Privacy Act 1988")
    assert r["source"] == "legislation"
    assert r["docId"] == "cth-privacy-act-1988"


async def test_verified_topics_resolve_after_legislation(hub, seeded, register):
    agent = await register()
    topic_id = await make_fact(
        hub,
        seeded,
        agent["headers"],
        title="National Minimum Wage 2025",
        jurisdiction="AU",
        tier="institutional",
        authority="Fair Work Commission",
        sourceRef="https://www.fwc.gov.au",
    )
    r = await resolve(hub, "National Minimum Wage 2025")
    assert r["docId"] == f"topic:{topic_id}"
    assert r["docType"] == "topic"
    assert r["source"] == "topic"
    assert r["inForce"] is None
    assert r["sectionRef"] is None
    assert r["matchTier"] == "exact"
    r = await resolve(hub, "national minimum wage 2025 s 3")
    assert r["matchTier"] == "near-exact"
    assert r["sectionRef"] is None
    assert r["inForce"] is None


async def test_unverified_topics_do_not_resolve(hub, seeded, register):
    agent = await register()
    resp = await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={
            "title": "Proposed Topic Title 2026",
            "content": "# Answer\n\nNot yet agreed.\n",
            "tier": "empirical",
        },
    )
    assert resp.status == 201
    r = await resolve(hub, "Proposed Topic Title 2026", status=404)
    assert r["error"] == "citation_not_resolved"


# Rule 4 details: sectionRef and inForce ---------------------------------------------------------


async def test_section_not_in_store_gives_null_section_ref(hub, seeded):
    r = await resolve(hub, "Privacy Act 1988 (Cth) s 999")
    assert r["resolved"] is True
    assert r["sectionRef"] is None
    assert r["requestedSection"] == "s 999"
    assert r["verifiedRef"] == "Privacy Act 1988 (Cth)"


async def test_in_force_is_false_when_repealed_true_with_date_else_null(hub, seeded):
    assert (await resolve(hub, "Occupational Health and Safety Act 2000 (NSW)"))["inForce"] is False
    assert (await resolve(hub, "Defamation Act 1974 (NSW)"))["inForce"] is False
    assert (await resolve(hub, "Work Health and Safety Act 2011 (Cth)"))["inForce"] is True
    assert (await resolve(hub, "Fair Trading Act 1987 (NSW)"))["inForce"] is None


# Rules 5-8 ----------------------------------------------------------------------------------------


async def test_missing_citation_gives_400(hub):
    for params in ({}, {"citation": ""}, {"citation": "   "}):
        resp = await hub.get("/api/axiom/resolve", params=params)
        assert resp.status == 400
        body = await resp.json()
        assert body["error"] == "citation_required"
        assert "citation" in body["detail"]


async def test_not_resolved_body(hub, seeded):
    r = await resolve(hub, "Imaginary Widgets Act 2031 (Qld) s 4", status=404)
    assert r["error"] == "citation_not_resolved"
    assert r["parsed"] == {
        "kind": "legislation",
        "title": "Imaginary Widgets Act 2031",
        "designation": None,
        "jurisdiction": "AU-QLD",
        "section": "s 4",
    }


@pytest.mark.parametrize(
    ("citation", "jurisdictions"),
    [
        ("Work Health and Safety Act 2011 s 19", ["AU", "AU-ACT", "AU-NSW", "AU-QLD"]),
        ("Work Health and Safety Act 2012", ["AU-SA", "AU-TAS"]),
        ("Defamation Act 2005", ["AU-NSW", "AU-QLD", "AU-SA", "AU-TAS", "AU-VIC", "AU-WA"]),
        ("Evidence Act 1995", ["AU", "AU-NSW"]),
        ("Crimes Act 1900", ["AU-ACT", "AU-NSW"]),
        ("Fair Trading Act 1987", ["AU-NSW", "AU-SA"]),
        ("Residential Tenancies Act 1997", ["AU-ACT", "AU-VIC"]),
        ("work health & safety act 2011", ["AU", "AU-ACT", "AU-NSW", "AU-QLD"]),
    ],
)
async def test_same_title_in_several_jurisdictions_is_ambiguous(hub, seeded, citation, jurisdictions):
    r = await resolve(hub, citation, status=404)
    assert r["error"] == "citation_ambiguous"
    assert sorted(c["jurisdiction"] for c in r["candidates"]) == jurisdictions
    assert all(c["docId"] and c["verifiedRef"] for c in r["candidates"])
    assert r["detail"]


async def test_candidates_follow_aglc_order(hub, seeded):
    r = await resolve(hub, "Work Health and Safety Act 2011", status=404)
    assert [c["jurisdictionAbbreviation"] for c in r["candidates"]] == ["Cth", "ACT", "NSW", "Qld"]
    assert "(Cth, ACT, NSW, Qld)" in r["detail"]


async def test_naming_the_jurisdiction_removes_the_ambiguity(hub, seeded):
    for abbrev, code in (("Cth", "AU"), ("NSW", "AU-NSW"), ("Qld", "AU-QLD"), ("ACT", "AU-ACT")):
        r = await resolve(hub, f"Work Health and Safety Act 2011 ({abbrev}) s 19")
        assert r["jurisdiction"] == code
        assert r["sectionRef"] == "s 19"


async def test_resolve_is_free_and_keyless(hub, seeded, register):
    agent = await register()
    r = await resolve(hub, "Privacy Act 1988 (Cth)", Authorization=agent["headers"]["Authorization"])
    assert r["free"] is True
    r = await resolve(hub, "Privacy Act 1988 (Cth)", Authorization="Bearer pact_ax_invalid")
    assert r["resolved"] is True


# The in-memory index follows the store ------------------------------------------------------------


async def test_index_refreshes_after_staff_ingest(hub, runtime):
    await resolve(hub, "Heritage Act 1977 (NSW)", status=404)
    headers = await staff_headers(runtime)
    await ingest(hub, headers, act("Heritage Act 1977", "NSW", ("s 1", "Name of Act"), year=1977))
    r = await resolve(hub, "Heritage Act 1977 (NSW) s 1")
    assert r["sectionRef"] == "s 1"
    assert r["inForce"] is None
    await ingest(
        hub,
        headers,
        act("Heritage Act 1977", "NSW", ("s 1", "Name of Act"), year=1977, repealedDate="2030-01-01"),
    )
    assert (await resolve(hub, "Heritage Act 1977 (NSW)"))["inForce"] is False


async def test_index_notices_writes_by_other_processes(hub, runtime):
    await resolve(hub, "Heritage Act 2004 (Qld)", status=404)
    # written straight to the database, as `concord legislation ingest` in another process would
    async with runtime.db.transaction() as session:
        await legislation.ingest(
            session, SYSTEM, legislation.parse_documents([act("Heritage Act 2004", "Qld")])
        )

    async def resolved():
        resp = await hub.get("/api/axiom/resolve", params={"citation": "Heritage Act 2004 (Qld)"})
        return resp.status == 200

    await eventually(resolved)
