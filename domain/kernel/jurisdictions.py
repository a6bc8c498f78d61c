"""Australian jurisdiction codes: ISO 3166-2:AU style (AU for the Commonwealth) and AGLC abbreviations."""

from __future__ import annotations

from domain.kernel.errors import BadRequest

# Canonical code → AGLC4 abbreviation (rule 3.1.3; mixed case as AGLC writes them).
AGLC = {
    "AU": "Cth",
    "AU-ACT": "ACT",
    "AU-NSW": "NSW",
    "AU-NT": "NT",
    "AU-QLD": "Qld",
    "AU-SA": "SA",
    "AU-TAS": "Tas",
    "AU-VIC": "Vic",
    "AU-WA": "WA",
}
# Every accepted spelling (case-insensitive) → canonical code.
_ALIASES = {abbrev.casefold(): code for code, abbrev in AGLC.items()}
_ALIASES.update({code.casefold(): code for code in AGLC})
_ALIASES.update({"au-cth": "AU", "commonwealth": "AU", "cwlth": "AU", "cth.": "AU"})
# What `lookup` takes (in any case), and what `prefix_filter` takes besides: the start of a code.
SPELLINGS = tuple(_ALIASES)
PREFIXES = tuple(sorted({code[:n] for code in AGLC for n in range(1, len(code) + 1)}))


def lookup(value: str) -> str | None:
    """The canonical code for an AGLC abbreviation or AU code (any case), else None."""
    return _ALIASES.get(value.strip().casefold())


def abbreviation(code: str) -> str:
    return AGLC.get(code, code)


def normalise(value: str, *, field: str = "jurisdiction") -> str:
    code = lookup(value)
    if code is None:
        raise BadRequest(
            f"{field} must be AU (Commonwealth) or AU-<region> (AU-NSW, AU-VIC, AU-QLD, AU-WA, AU-SA, "
            "AU-TAS, AU-ACT, AU-NT), or an AGLC abbreviation (Cth, NSW, Vic, Qld, WA, SA, Tas, ACT, NT)",
            code="invalid_field",
            field=field,
        )
    return code


def prefix_filter(value: str | None, *, field: str = "jurisdiction") -> str | None:
    """A listing filter: a known jurisdiction (any form topic creation takes), or the start of a known code
    as the public hub allows (AU matches every AU-…, AU-N matches AU-NSW and AU-NT). Anything that can
    match no jurisdiction (Mars) is a 400 as at topic creation, not an empty list."""
    if value is None or not value.strip():
        return None
    code = lookup(value)
    if code is not None:
        return code
    prefix = value.strip().upper()
    if any(known.startswith(prefix) for known in AGLC):
        return prefix
    normalise(value, field=field)  # raises the creation's message
    return None  # pragma: no cover - normalise raised
