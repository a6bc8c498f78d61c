"""A table of real citations of every AGLC shape (rule 3.1.4 pinpoints: s, ss with ranges, elisions and lists,
sch, pt, div, sub-div, reg, r, cl, item, ch, definitions; the forms people type; standards designations), each
with the answer GET /api/axiom/resolve must give against the seeded sample: the instrument whenever its title
resolves, `sectionRef` the longest verified part of the pinpoint, `verifiedRef` exactly what was verified and
`unverifiedPinpoint` the rest; near misses answer 404 with suggestions, never a fuzzy match."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from domain.axiom.seed import seed_legislation


@dataclass(frozen=True)
class Hit:
    jurisdiction: str
    requested: str | None
    section_ref: str | None
    verified_ref: str
    unverified: str | None


@dataclass(frozen=True)
class Miss:
    suggestions: list[str]


@dataclass(frozen=True)
class Ambiguous:
    jurisdictions: list[str]


TABLE: list[tuple[str, Hit | Miss | Ambiguous]] = [
    (
        "Corporations Act 2001 (Cth) s 180(1)",
        Hit("AU", "s 180(1)", "s 180", "Corporations Act 2001 (Cth) s 180", "(1)"),
    ),
    (
        "Corporations Act 2001 (Cth) s 180(1)(a)",
        Hit("AU", "s 180(1)(a)", "s 180", "Corporations Act 2001 (Cth) s 180", "(1)(a)"),
    ),
    (
        "Corporations Act 2001 (Cth) s 180",
        Hit("AU", "s 180", "s 180", "Corporations Act 2001 (Cth) s 180", None),
    ),
    (
        "Corporations Act 2001 (Cth) ss 180-184",
        Hit("AU", "ss 180–184", "s 180", "Corporations Act 2001 (Cth) ss 180–184", None),
    ),
    (
        "Corporations Act 2001 (Cth) ss 180–184",
        Hit("AU", "ss 180–184", "s 180", "Corporations Act 2001 (Cth) ss 180–184", None),
    ),
    (
        "Corporations Act 2001 (Cth) ss 180–4",
        Hit("AU", "ss 180–184", "s 180", "Corporations Act 2001 (Cth) ss 180–184", None),
    ),
    (
        "Corporations Act 2001 (Cth) ss 180, 181",
        Hit("AU", "ss 180, 181", "s 180", "Corporations Act 2001 (Cth) ss 180, 181", None),
    ),
    (
        "Corporations Act 2001 (Cth) ss 180 and 181",
        Hit("AU", "ss 180, 181", "s 180", "Corporations Act 2001 (Cth) ss 180, 181", None),
    ),
    (
        "Corporations Act 2001 (Cth) ss 180–190",
        Hit("AU", "ss 180–190", "s 180", "Corporations Act 2001 (Cth) s 180", "ss 180–190"),
    ),
    (
        "Corporations Act 2001 (Cth) pt 2D.1",
        Hit("AU", "pt 2D.1", "pt 2D.1", "Corporations Act 2001 (Cth) pt 2D.1", None),
    ),
    (
        "Corporations Act 2001 (Cth) ch 2D",
        Hit("AU", "ch 2D", "ch 2D", "Corporations Act 2001 (Cth) ch 2D", None),
    ),
    (
        "Corporations Act 2001 (Cth) pt 2D.1 div 1",
        Hit("AU", "pt 2D.1 div 1", "pt 2D.1", "Corporations Act 2001 (Cth) pt 2D.1", "div 1"),
    ),
    (
        "Corporations Act 2001 (Cth) s 588G(2)",
        Hit("AU", "s 588G(2)", "s 588G", "Corporations Act 2001 (Cth) s 588G", "(2)"),
    ),
    (
        "Corporations Act 2001 (Cth) s 9 (definition of 'director')",
        Hit(
            "AU",
            "s 9 (definition of 'director')",
            "s 9",
            "Corporations Act 2001 (Cth) s 9",
            "(definition of 'director')",
        ),
    ),
    (
        "Corporations Act 2001 (Cth), s 181",
        Hit("AU", "s 181", "s 181", "Corporations Act 2001 (Cth) s 181", None),
    ),
    (
        "Corporations Act 2001 s 180 (Cth)",
        Hit("AU", "s 180", "s 180", "Corporations Act 2001 (Cth) s 180", None),
    ),
    (
        "Corporations Act 2001 (CTH) S. 180",
        Hit("AU", "s 180", "s 180", "Corporations Act 2001 (Cth) s 180", None),
    ),
    (
        "Corporations Act 2001 (Cth) section 180(1)",
        Hit("AU", "s 180(1)", "s 180", "Corporations Act 2001 (Cth) s 180", "(1)"),
    ),
    (
        "Corporations Act 2001 (Cth) Sec 180(1)",
        Hit("AU", "s 180(1)", "s 180", "Corporations Act 2001 (Cth) s 180", "(1)"),
    ),
    ("Corporations Act (Cth) s 180", Miss(["Corporations Act 2001 (Cth)"])),
    ("Corporations Act 2011 (Cth) s 180", Miss(["Corporations Act 2001 (Cth)"])),
    (
        "Competition and Consumer Act 2010 (Cth) sch 2",
        Hit("AU", "sch 2", "sch 2", "Competition and Consumer Act 2010 (Cth) sch 2", None),
    ),
    (
        "Competition and Consumer Act 2010 (Cth) sch 2 s 18",
        Hit("AU", "sch 2 s 18", "sch 2", "Competition and Consumer Act 2010 (Cth) sch 2", "s 18"),
    ),
    (
        "Competition and Consumer Act 2010 (Cth) sch 2 s 18(1)",
        Hit("AU", "sch 2 s 18(1)", "sch 2", "Competition and Consumer Act 2010 (Cth) sch 2", "s 18(1)"),
    ),
    (
        "Competition and Consumer Act 2010 (Cth) schedule 2",
        Hit("AU", "sch 2", "sch 2", "Competition and Consumer Act 2010 (Cth) sch 2", None),
    ),
    (
        "Competition and Consumer Act 2010 (Cth) s 46",
        Hit("AU", "s 46", "s 46", "Competition and Consumer Act 2010 (Cth) s 46", None),
    ),
    (
        "Fair Work Regulations 2009 (Cth) reg 1.01",
        Hit("AU", "reg 1.01", "reg 1.01", "Fair Work Regulations 2009 (Cth) reg 1.01", None),
    ),
    (
        "Fair Work Regulations 2009 (Cth) reg 1.01(1)",
        Hit("AU", "reg 1.01(1)", "reg 1.01", "Fair Work Regulations 2009 (Cth) reg 1.01", "(1)"),
    ),
    (
        "Fair Work Regulations 2009 (Cth) regs 1.01–1.02",
        Hit(
            "AU", "regs 1.01–1.02", "reg 1.01", "Fair Work Regulations 2009 (Cth) reg 1.01", "regs 1.01–1.02"
        ),
    ),
    (
        "Migration Regulations 1994 (Cth) reg 1.01",
        Hit("AU", "reg 1.01", "reg 1.01", "Migration Regulations 1994 (Cth) reg 1.01", None),
    ),
    (
        "Migration Regulations 1994 (Cth) r 1.01",
        # `r` for a regulation's provision is accepted as `reg`; the stored spelling is answered
        Hit("AU", "r 1.01", "reg 1.01", "Migration Regulations 1994 (Cth) reg 1.01", None),
    ),
    (
        "Work Health and Safety Regulation 2017 (NSW) cl 5",
        Hit("AU-NSW", "cl 5", None, "Work Health and Safety Regulation 2017 (NSW)", "cl 5"),
    ),
    (
        "Work Health and Safety Regulation 2017 (NSW) r 7",
        Hit("AU-NSW", "r 7", None, "Work Health and Safety Regulation 2017 (NSW)", "r 7"),
    ),
    (
        "Work Health and Safety Regulation 2017 (NSW) reg 5(1)",
        Hit("AU-NSW", "reg 5(1)", None, "Work Health and Safety Regulation 2017 (NSW)", "reg 5(1)"),
    ),
    (
        "Work Health and Safety Regulation 2017",
        Hit("AU-NSW", None, None, "Work Health and Safety Regulation 2017 (NSW)", None),
    ),
    (
        "Work Health and Safety Act 2011 (Cth) s 19(2)(a)",
        Hit("AU", "s 19(2)(a)", "s 19", "Work Health and Safety Act 2011 (Cth) s 19", "(2)(a)"),
    ),
    (
        "Work Health and Safety Act 2011 (Cth) ss 19–21",
        Hit("AU", "ss 19–21", "s 19", "Work Health and Safety Act 2011 (Cth) s 19", "ss 19–21"),
    ),
    ("Work Health and Safety Act 2011 (Cth) s 19 (NSW)", Miss([])),
    ("Work Health and Safety Act 2011 s 19", Ambiguous(["ACT", "Cth", "NSW", "Qld"])),
    (
        "Work Health and Safety Act 2011 (NSW) div 2",
        Hit("AU-NSW", "div 2", None, "Work Health and Safety Act 2011 (NSW)", "div 2"),
    ),
    (
        "Work Health and Safety Act 2011 (NSW) pt 2 div 2 s 19",
        Hit("AU-NSW", "pt 2 div 2 s 19", None, "Work Health and Safety Act 2011 (NSW)", "pt 2 div 2 s 19"),
    ),
    (
        "Income Tax Assessment Act 1997 (Cth) s 8-1",
        Hit("AU", "s 8-1", "s 8-1", "Income Tax Assessment Act 1997 (Cth) s 8-1", None),
    ),
    (
        "Income Tax Assessment Act 1997 (Cth) s 8-1(1)",
        Hit("AU", "s 8-1(1)", "s 8-1", "Income Tax Assessment Act 1997 (Cth) s 8-1", "(1)"),
    ),
    (
        "Income Tax Assessment Act 1997 (Cth) ss 6-5–8-1",
        Hit("AU", "ss 6-5–8-1", "s 6-5", "Income Tax Assessment Act 1997 (Cth) ss 6-5–8-1", None),
    ),
    (
        "Income Tax Assessment Act 1997 (Cth) ss 6-5-8-1",
        Hit("AU", "ss 6-5–8-1", "s 6-5", "Income Tax Assessment Act 1997 (Cth) ss 6-5–8-1", None),
    ),
    (
        "Income Tax Assessment Act 1997 (Cth) div 8",
        Hit("AU", "div 8", None, "Income Tax Assessment Act 1997 (Cth)", "div 8"),
    ),
    (
        "Environmental Planning and Assessment Act 1979 (NSW) s 4.15(1)",
        Hit(
            "AU-NSW",
            "s 4.15(1)",
            "s 4.15",
            "Environmental Planning and Assessment Act 1979 (NSW) s 4.15",
            "(1)",
        ),
    ),
    (
        "Environmental Planning and Assessment Act 1979 (NSW) pt 4",
        Hit("AU-NSW", "pt 4", None, "Environmental Planning and Assessment Act 1979 (NSW)", "pt 4"),
    ),
    (
        "Racial Discrimination Act 1975 (Cth) s 18C",
        Hit("AU", "s 18C", "s 18C", "Racial Discrimination Act 1975 (Cth) s 18C", None),
    ),
    (
        "Racial Discrimination Act 1975 (Cth) ss 18C–18D",
        Hit("AU", "ss 18C–18D", "s 18C", "Racial Discrimination Act 1975 (Cth) s 18C", "ss 18C–18D"),
    ),
    (
        "Acts Interpretation Act 1901 (Cth) s 15AA",
        Hit("AU", "s 15AA", "s 15AA", "Acts Interpretation Act 1901 (Cth) s 15AA", None),
    ),
    (
        "Acts Interpretation Act 1901 (Cth) ss 15AA, 15AB",
        Hit("AU", "ss 15AA, 15AB", "s 15AA", "Acts Interpretation Act 1901 (Cth) ss 15AA, 15AB", None),
    ),
    ("Crimes Act 1914 (Cth) s 4AA", Hit("AU", "s 4AA", "s 4AA", "Crimes Act 1914 (Cth) s 4AA", None)),
    ("Crimes Act 1900 (NSW) s 19A", Hit("AU-NSW", "s 19A", "s 19A", "Crimes Act 1900 (NSW) s 19A", None)),
    ("Crimes Act 1900 s 19A", Ambiguous(["ACT", "NSW"])),
    (
        "Crimes Act 1900 (Vic) s 3",
        Miss(["Crimes Act 1958 (Vic)", "Crimes Act 1900 (ACT)", "Crimes Act 1900 (NSW)"]),
    ),
    (
        "Privacy Act 1988 (Cth) s 6 (definition of 'personal information')",
        Hit(
            "AU",
            "s 6 (definition of 'personal information')",
            "s 6",
            "Privacy Act 1988 (Cth) s 6",
            "(definition of 'personal information')",
        ),
    ),
    ("Privacy Act 1988 (Cth) sch 1", Hit("AU", "sch 1", None, "Privacy Act 1988 (Cth)", "sch 1")),
    (
        "Privacy Act 1988 (Cth) sch 1 cl 11",
        Hit("AU", "sch 1 cl 11", None, "Privacy Act 1988 (Cth)", "sch 1 cl 11"),
    ),
    (
        "Human Rights Act 2019 (Qld) s 58(1)(a)",
        Hit("AU-QLD", "s 58(1)(a)", "s 58", "Human Rights Act 2019 (Qld) s 58", "(1)(a)"),
    ),
    (
        "Charter of Human Rights and Responsibilities Act 2006 (Vic) s 38(1)",
        Hit(
            "AU-VIC",
            "s 38(1)",
            "s 38",
            "Charter of Human Rights and Responsibilities Act 2006 (Vic) s 38",
            "(1)",
        ),
    ),
    (
        "Evidence Act 1995 (Cth) ss 55–56",
        Hit("AU", "ss 55–56", "s 55", "Evidence Act 1995 (Cth) ss 55–56", None),
    ),
    (
        "Evidence Act 1995 (NSW) s 135(a)",
        Hit("AU-NSW", "s 135(a)", "s 135", "Evidence Act 1995 (NSW) s 135", "(a)"),
    ),
    ("Evidence Act 1995 (Cth) item 3", Hit("AU", "item 3", None, "Evidence Act 1995 (Cth)", "item 3")),
    ("Defamation Act 2005 (NSW) s 25", Hit("AU-NSW", "s 25", "s 25", "Defamation Act 2005 (NSW) s 25", None)),
    (
        "Civil Liability Act 2002 (NSW) s 5B(1)",
        Hit("AU-NSW", "s 5B(1)", "s 5B", "Civil Liability Act 2002 (NSW) s 5B", "(1)"),
    ),
    ("Copyright Act 1968 (Cth) pt III", Hit("AU", "pt III", None, "Copyright Act 1968 (Cth)", "pt III")),
    (
        "Copyright Act 1968 (Cth) pt III div 2",
        Hit("AU", "pt III div 2", None, "Copyright Act 1968 (Cth)", "pt III div 2"),
    ),
    (
        "Native Title Act 1993 (Cth) s 223(1)(b)",
        Hit("AU", "s 223(1)(b)", "s 223", "Native Title Act 1993 (Cth) s 223", "(1)(b)"),
    ),
    (
        "Migration Act 1958 (Cth) s 501(6)(d)",
        Hit("AU", "s 501(6)(d)", "s 501", "Migration Act 1958 (Cth) s 501", "(6)(d)"),
    ),
    (
        "Fair Work Act 2009 (Cth) s 385(a)",
        Hit("AU", "s 385(a)", "s 385", "Fair Work Act 2009 (Cth) s 385", "(a)"),
    ),
    ("Fair Work Act 2009 (Cth) pt 3-2", Hit("AU", "pt 3-2", None, "Fair Work Act 2009 (Cth)", "pt 3-2")),
    (
        "Home Building Act 1989 (NSW) s 18B",
        Hit("AU-NSW", "s 18B", "s 18B", "Home Building Act 1989 (NSW) s 18B", None),
    ),
    ("AS/NZS 3000:2018", Hit("AU", None, None, "AS/NZS 3000:2018", None)),
    ("AS/NZS 3000:2018 cl 1.1", Hit("AU", "cl 1.1", "cl 1.1", "AS/NZS 3000:2018 cl 1.1", None)),
    (
        "AS/NZS 3000:2018 cls 1.1–1.4",
        Hit("AU", "cls 1.1–1.4", "cl 1.1", "AS/NZS 3000:2018 cls 1.1–1.4", None),
    ),
    ("AS/NZS 3000:2018 cl 1.4.2", Hit("AU", "cl 1.4.2", None, "AS/NZS 3000:2018", "cl 1.4.2")),
    ("AS 3000:2018", Miss(["AS/NZS 3000:2018"])),
    ("AS 3000", Miss(["AS/NZS 3000:2018"])),
    ("AS 3600:2018 cl 1.1", Hit("AU", "cl 1.1", "cl 1.1", "AS 3600:2018 cl 1.1", None)),
    ("AS 3600-2009", Hit("AU", None, None, "AS 3600-2009", None)),
    ("AS 3600", Miss(["AS 3600:2018", "AS 3600-2009"])),
    ("AS 3600:2009", Hit("AU", None, None, "AS 3600-2009", None)),
    ("AS/NZS 1170.2:2021 cl 1.1", Hit("AU", "cl 1.1", "cl 1.1", "AS/NZS 1170.2:2021 cl 1.1", None)),
    ("AS 1170.2:2021", Miss(["AS/NZS 1170.2:2021"])),
    ("AS ISO 31000:2018", Hit("AU", None, None, "AS ISO 31000:2018", None)),
    ("AS/NZS ISO 31000:2018", Miss(["AS ISO 31000:2018", "AS/NZS ISO 31000:2009"])),
    ("ISO 31000:2018", Miss(["AS ISO 31000:2018", "AS/NZS ISO 31000:2009"])),
    ("AS 1428.1-2009 cl 1.1(a)", Hit("AU", "cl 1.1(a)", "cl 1.1", "AS 1428.1-2009 cl 1.1", "(a)")),
    ("Crimes Act 1900 (ACT) s 12(1)", Hit("AU-ACT", "s 12(1)", "s 12", "Crimes Act 1900 (ACT) s 12", "(1)")),
    (
        "Evidence Act 2008 (Vic) s 55(1)",
        Hit("AU-VIC", "s 55(1)", "s 55", "Evidence Act 2008 (Vic) s 55", "(1)"),
    ),
    ("Defamation Act 2005 (Tas) s 26", Hit("AU-TAS", "s 26", "s 26", "Defamation Act 2005 (Tas) s 26", None)),
]


@pytest.fixture
async def seeded(runtime: Any) -> Any:
    async with runtime.db.transaction() as session:
        await seed_legislation(session)
    return runtime


def test_the_table_covers_every_pinpoint_shape() -> None:
    assert len(TABLE) >= 60
    asked = " ".join(citation for citation, _ in TABLE)
    for shape in (
        " s ",
        " ss ",
        " sch ",
        " pt ",
        " div ",
        " reg ",
        " regs ",
        " r ",
        " cl ",
        " cls ",
        " item ",
        " ch ",
        "definition of",
        "–",
        "-",
        ", ",
        " and ",
        "AS/NZS",
        "AS ISO",
        "ISO ",
    ):
        assert shape in asked, shape


async def test_every_citation_of_the_table_resolves_as_expected(hub: Any, seeded: Any) -> None:
    wrong = []
    for citation, expected in TABLE:
        resp = await hub.get("/api/axiom/resolve", params={"citation": citation})
        body = await resp.json()
        if isinstance(expected, Hit):
            got: Any = (
                Hit(
                    body["jurisdiction"],
                    body["requestedSection"],
                    body["sectionRef"],
                    body["verifiedRef"],
                    body["unverifiedPinpoint"],
                )
                if resp.status == 200
                else (resp.status, body)
            )
        elif isinstance(expected, Miss):
            got = (
                Miss(body["suggestions"])
                if resp.status == 404 and body["error"] == "citation_not_resolved"
                else (resp.status, body)
            )
        else:
            got = (
                Ambiguous(sorted(c["jurisdictionAbbreviation"] for c in body["candidates"]))
                if resp.status == 404 and body["error"] == "citation_ambiguous"
                else (resp.status, body)
            )
        if got != expected:
            wrong.append(f"{citation}\n  expected {expected}\n  got      {got}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    ("citation", "hint"),
    [
        ("AS 3000:2018", "did you mean AS/NZS 3000:2018?"),
        ("AS 3600", "name the edition: AS 3600:2018, AS 3600-2009"),
        ("ISO 31000:2018", "Australian adoption: AS ISO 31000:2018"),
        ("Corporations Act (Cth) s 180", "add the year (and the jurisdiction): Corporations Act 2001 (Cth)"),
        (
            "Corporations Act 2011 (Cth)",
            "no instrument of that year; the store has Corporations Act 2001 (Cth)",
        ),
    ],
)
async def test_a_near_miss_says_what_it_nearly_names(hub: Any, seeded: Any, citation: str, hint: str) -> None:
    resp = await hub.get("/api/axiom/resolve", params={"citation": citation})
    body = await resp.json()
    assert resp.status == 404, body
    assert body["resolved"] is False
    assert hint in body["hint"], body
