"""README documents every setting (both settings classes), so operators can find each knob."""

from __future__ import annotations

from pathlib import Path

from domain.kernel.settings import Settings
from domain.market.settings import MarketSettings
from domain.work.settings import WorkSettings

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def test_every_setting_is_in_the_readme():
    names = (
        [f"CONCORD_{n.upper()}" for n in Settings.model_fields]
        + [f"CONCORD_MARKET_{n.upper()}" for n in MarketSettings.model_fields]
        + [f"CONCORD_WORK_{n.upper()}" for n in WorkSettings.model_fields]
    )
    missing = [n for n in names if f"`{n}`" not in README]
    assert missing == []


def test_readme_opens_with_the_two_commands():
    head = README[:400]
    assert "make run" in head
    assert "make test" in head
