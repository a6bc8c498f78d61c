"""Where an instrument's text came from: the register (or corpus) it was read from, and the licence and the
attribution each source asks for. The registers publish under CC BY 4.0, each naming how it wants to be
credited; `attribution` builds that line for a compilation's date."""

from __future__ import annotations

from datetime import date
from enum import StrEnum


class Register(StrEnum):
    """The source of an instrument's text."""

    FRL = "frl"  # Federal Register of Legislation (Commonwealth)
    NSW = "nsw"
    QLD = "qld"
    WA = "wa"
    SA = "sa"
    TAS = "tas"
    OALC = "oalc"  # the Open Australian Legal Corpus (JSONL)
    SAMPLE = "sample"  # Concord's seeded sample: titles and headings, no statutory text
    OTHER = "other"


CC_BY = "CC BY 4.0"

_SITES: dict[Register, tuple[str, str]] = {
    Register.FRL: ("the Federal Register of Legislation", "https://www.legislation.gov.au"),
    Register.NSW: ("the NSW legislation website", "https://legislation.nsw.gov.au"),
    Register.QLD: ("the Queensland legislation website", "https://www.legislation.qld.gov.au"),
    Register.WA: ("the Western Australian legislation website", "https://www.legislation.wa.gov.au"),
    Register.SA: ("the South Australian legislation website", "https://www.legislation.sa.gov.au"),
    Register.TAS: ("the Tasmanian legislation website", "https://www.legislation.tas.gov.au"),
    Register.OALC: (
        "the Open Australian Legal Corpus",
        "https://huggingface.co/datasets/umarbutler/open-australian-legal-corpus",
    ),
}


def attribution(register: Register, as_at: date | None) -> str | None:
    """The attribution line a source's CC BY 4.0 licence asks for (None for the sample and other sources,
    whose importer must say it)."""
    when = as_at.isoformat() if as_at else "the date of download"
    if register is Register.FRL:
        # The wording the Federal Register of Legislation asks re-users to give.
        return (
            f"Sourced from the Federal Register of Legislation at {when}. For the latest information on "
            "Australian Government law please go to https://www.legislation.gov.au"
        )
    site = _SITES.get(register)
    if site is None:
        return None
    name, url = site
    return f"Contains material from {name} ({url}) as at {when}, licensed under {CC_BY}."


def register_for(source: str) -> Register:
    """A register from a name as sources spell it (`federal_register_of_legislation`, `nsw_legislation`,
    `frl`, …); OTHER when none fits."""
    key = source.casefold()
    for register, words in (
        (Register.FRL, ("federal_register", "frl", "legislation.gov.au")),
        (Register.NSW, ("nsw", "new_south_wales")),
        (Register.QLD, ("qld", "queensland")),
        (Register.WA, ("western_australia", "wa_legislation", "legislation.wa")),
        (Register.SA, ("south_australia", "sa_legislation", "legislation.sa")),
        (Register.TAS, ("tas", "tasmania")),
    ):
        if any(w in key for w in words):
            return register
    try:
        return Register(key)
    except ValueError:
        return Register.OTHER
