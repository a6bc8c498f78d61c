"""Australian jurisdiction codes: ISO 3166-2:AU style (AU for the Commonwealth) and AGLC abbreviations."""

from __future__ import annotations

from enum import StrEnum

from domain.kernel.errors import BadRequest


class Jurisdiction(StrEnum):
    """The canonical codes, as stored and answered."""

    AU = "AU"
    AU_ACT = "AU-ACT"
    AU_NSW = "AU-NSW"
    AU_NT = "AU-NT"
    AU_QLD = "AU-QLD"
    AU_SA = "AU-SA"
    AU_TAS = "AU-TAS"
    AU_VIC = "AU-VIC"
    AU_WA = "AU-WA"


# Canonical code → AGLC4 abbreviation (rule 3.1.3; mixed case as AGLC writes them).
AGLC: dict[str, str] = {
    Jurisdiction.AU: "Cth",
    Jurisdiction.AU_ACT: "ACT",
    Jurisdiction.AU_NSW: "NSW",
    Jurisdiction.AU_NT: "NT",
    Jurisdiction.AU_QLD: "Qld",
    Jurisdiction.AU_SA: "SA",
    Jurisdiction.AU_TAS: "Tas",
    Jurisdiction.AU_VIC: "Vic",
    Jurisdiction.AU_WA: "WA",
}
# What a request may name a jurisdiction by, exactly as written: a code or its AGLC abbreviation.
_EXACT = {code.value: code.value for code in Jurisdiction} | {abbrev: code for code, abbrev in AGLC.items()}
SPELLINGS = tuple(_EXACT)
# What a listing filter takes besides: the start of a code (AU-N matches AU-NSW and AU-NT).
PREFIXES = tuple(sorted({code[:n] for code in AGLC for n in range(1, len(code) + 1)} - set(SPELLINGS)))
ALLOWED = (
    "AU (Commonwealth) or AU-<region> (AU-NSW, AU-VIC, AU-QLD, AU-WA, AU-SA, AU-TAS, AU-ACT, AU-NT), or an "
    "AGLC abbreviation (Cth, NSW, Vic, Qld, WA, SA, Tas, ACT, NT), written so"
)
# Citations are free text: their jurisdiction is read in any case and in the other forms writers use.
_IN_CITATIONS = {spelling.casefold(): code for spelling, code in _EXACT.items()} | {
    "au-cth": "AU",
    "commonwealth": "AU",
    "cwlth": "AU",
    "cth.": "AU",
}


def lookup(value: str) -> str | None:
    """The canonical code a citation's jurisdiction names (an AGLC abbreviation or AU code, any case)."""
    return _IN_CITATIONS.get(value.strip().casefold())


def abbreviation(code: str) -> str:
    return AGLC.get(code, code)


def exact(value: str) -> str | None:
    """The canonical code of a jurisdiction named exactly as a code or an AGLC abbreviation, else None."""
    return _EXACT.get(value)


def normalise(value: str, *, field: str = "jurisdiction") -> str:
    """The canonical code of a jurisdiction a request names exactly (a code or an AGLC abbreviation)."""
    code = exact(value)
    if code is None:
        raise BadRequest(f"{field} must be {ALLOWED}", code="invalid_field", field=field)
    return code


def prefix_filter(value: str | None, *, field: str = "jurisdiction") -> str | None:
    """A listing filter: a jurisdiction as `normalise` takes it, or the start of a known code as the public
    hub allows (AU matches every AU-…, AU-N matches AU-NSW and AU-NT). Anything that can match no
    jurisdiction (Mars) is a 400 as at topic creation, not an empty list."""
    if value is None:
        return None
    if value in PREFIXES:
        return value
    return normalise(value, field=field)
