"""Pack sizes convert into the canonical quote units exactly, and never across dimensions."""

import pytest

from domain.market import units


@pytest.mark.parametrize(
    ("text", "amount", "unit"),
    [
        ("4 L", 4.0, "L"),
        ("750 mL", 0.75, "L"),
        ("500g", 0.5, "kg"),
        ("20 kg", 20.0, "kg"),
        ("5.4 m", 5.4, "lm"),
        ("2400x1200 mm", 2.88, "m²"),
        ("1350 x 30000 mm", 40.5, "m²"),
        ("1.62 m2", 1.62, "m²"),
        ("100 each", 100.0, "item"),
    ],
)
def test_parse_pack(text, amount, unit):
    q = units.parse_pack(text)
    assert q.unit == unit
    assert q.amount == pytest.approx(amount)


@pytest.mark.parametrize("text", ["", "four litres", "3 furlongs", "0 L", "-2 kg"])
def test_parse_pack_refuses_unreadable(text):
    with pytest.raises(units.UnitError):
        units.parse_pack(text)


def test_rate_only_in_the_pack_dimension():
    sheet = units.parse_pack("2400x1200 mm")
    assert units.rate_per_unit(1790, sheet, "m²") == pytest.approx(1790 / 2.88)
    with pytest.raises(units.UnitError):
        units.rate_per_unit(1790, sheet, "L")


@pytest.mark.parametrize(
    ("name", "unit"),
    [("m²", "m²"), ("M²", "m²"), ("l", "L"), (" L ", "L"), ("LM", "lm"), ("Item", "item"), ("kg", "kg")]
    + [("m2", "m²"), ("sqm", "m²"), ("each", "item"), ("g", "kg"), ("mL", "L")],
)
def test_the_canonical_unit_of_a_unit_name_in_any_case(name, unit):
    assert units.canonical(name) == unit


@pytest.mark.parametrize("name", ["", "furlong", "m3", "litre per m"])
def test_an_unknown_unit_name_has_no_canonical_unit(name):
    with pytest.raises(units.UnitError):
        units.canonical(name)
