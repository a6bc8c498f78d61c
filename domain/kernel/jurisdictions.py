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
    """A listing filter: a known jurisdiction, or a code prefix such as AU (matches every AU-…)."""
    if value is None or not value.strip():
        return None
    code = lookup(value)
    if code is not None:
        return code
    value = value.strip().upper()
    if not all(ch.isalnum() or ch == "-" for ch in value) or len(value) > 16:
        raise BadRequest(f"{field} must look like AU or AU-NSW", code="invalid_field", field=field)
    return value
