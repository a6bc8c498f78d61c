"""Pack sizes and unit conversion into the five canonical quote units (m², lm, L, item, kg).

A product states its pack as a size and a unit ("4 L", "500 g", "5.4 m", "2400x1200 mm", "100 each").
A per-unit rate is only computed when the pack converts into the item key's unit exactly; anything
else is refused rather than guessed (a 4 L tin never becomes a rate per m²).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class QuoteUnit(StrEnum):
    """The canonical units a quote rate is given in."""

    SQUARE_METRE = "m²"
    LINEAL_METRE = "lm"
    LITRE = "L"
    ITEM = "item"
    KILOGRAM = "kg"


CANONICAL = tuple(QuoteUnit)
_BY_NAME = {unit.lower(): unit for unit in QuoteUnit}  # a canonical unit's name in any case

# Factor to the canonical unit of each dimension.
_FACTORS: dict[str, tuple[QuoteUnit, float]] = {
    # volume
    "l": (QuoteUnit.LITRE, 1.0),
    "litre": (QuoteUnit.LITRE, 1.0),
    "litres": (QuoteUnit.LITRE, 1.0),
    "ml": (QuoteUnit.LITRE, 0.001),
    # mass
    "kg": (QuoteUnit.KILOGRAM, 1.0),
    "g": (QuoteUnit.KILOGRAM, 0.001),
    "t": (QuoteUnit.KILOGRAM, 1000.0),
    # length (sold by the lineal metre)
    "lm": (QuoteUnit.LINEAL_METRE, 1.0),
    "m": (QuoteUnit.LINEAL_METRE, 1.0),
    "cm": (QuoteUnit.LINEAL_METRE, 0.01),
    "mm": (QuoteUnit.LINEAL_METRE, 0.001),
    # area
    "m2": (QuoteUnit.SQUARE_METRE, 1.0),
    "m²": (QuoteUnit.SQUARE_METRE, 1.0),
    "sqm": (QuoteUnit.SQUARE_METRE, 1.0),
    "cm2": (QuoteUnit.SQUARE_METRE, 0.0001),
    "mm2": (QuoteUnit.SQUARE_METRE, 0.000001),
    # count
    "item": (QuoteUnit.ITEM, 1.0),
    "items": (QuoteUnit.ITEM, 1.0),
    "each": (QuoteUnit.ITEM, 1.0),
    "ea": (QuoteUnit.ITEM, 1.0),
    "pack": (QuoteUnit.ITEM, 1.0),
    "pc": (QuoteUnit.ITEM, 1.0),
    "pcs": (QuoteUnit.ITEM, 1.0),
}
_AREA = {"mm": 0.001, "cm": 0.01, "m": 1.0}
_NUMBER = r"(\d+(?:\.\d+)?)"
_DIMS = re.compile(rf"^\s*{_NUMBER}\s*[x×]\s*{_NUMBER}\s*(mm|cm|m)\s*$", re.IGNORECASE)
_SIMPLE = re.compile(rf"^\s*{_NUMBER}\s*([a-z²0-9]+)\s*$", re.IGNORECASE)


class UnitError(ValueError):
    pass


@dataclass(frozen=True)
class Quantity:
    amount: float
    unit: str  # canonical: a QuoteUnit (stored rows give its value back as a plain string)


def canonical(unit: str) -> QuoteUnit:
    """The canonical unit of a unit name, or UnitError."""
    key = unit.strip().lower()
    if key in _BY_NAME:
        return _BY_NAME[key]
    if key not in _FACTORS:
        raise UnitError(f"unknown unit {unit!r}")
    return _FACTORS[key][0]


def to_canonical(size: float, unit: str) -> Quantity:
    """Convert `size unit` (e.g. 500 g) to its canonical unit (0.5 kg)."""
    if size <= 0:
        raise UnitError("pack size must be positive")
    key = unit.strip().lower()
    if key not in _FACTORS:
        raise UnitError(f"unknown unit {unit!r}")
    canon, factor = _FACTORS[key]
    return Quantity(size * factor, canon)


def parse_pack(text: str) -> Quantity:
    """Parse a pack description: "4 L", "500g", "5.4 m", "2400x1200 mm" (an area), "100 each"."""
    match = _DIMS.match(text)
    if match:
        a, b, unit = float(match[1]), float(match[2]), match[3].lower()
        factor = _AREA[unit]
        area = (a * factor) * (b * factor)
        if area <= 0:
            raise UnitError("pack dimensions must be positive")
        return Quantity(area, QuoteUnit.SQUARE_METRE)
    match = _SIMPLE.match(text)
    if not match:
        raise UnitError(f"cannot read pack size {text!r}")
    return to_canonical(float(match[1]), match[2])


def rate_per_unit(price_cents: int, pack: Quantity, unit: str) -> float:
    """Price per one `unit` (canonical) in cents, when the pack is measured in that unit."""
    if pack.unit != unit:
        raise UnitError(f"pack measured in {pack.unit} cannot give a rate per {unit}")
    return price_cents / pack.amount
