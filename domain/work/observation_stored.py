"""Stored format: a price observation submission as its row's `submission` JSON column keeps it (and the
curators' queue answers it as `submission`), camelCase, in the order the request model's fields have.
Written here and read back here only. A stored row is read as it is: it was checked when it was submitted,
and it is not checked (refused or trimmed) again."""

from __future__ import annotations

from typing import Any

from domain.work.observations import Observation


def stored(obs: Observation) -> dict[str, Any]:
    """The observation's stored JSON, byte for byte what the submission's model dump was."""
    return {
        "itemKey": obs.item_key,
        "retailerSlug": obs.retailer_slug,
        "productName": obs.product_name,
        "productUrl": obs.product_url,
        "ean": obs.ean,
        "priceCents": obs.price_cents,
        "unitPriceCents": obs.unit_price_cents,
        "unitPriceUnit": obs.unit_price_unit,
        "inStock": obs.in_stock,
    }


def read(data: dict[str, Any]) -> Observation:
    """A stored price observation, as it was stored (every price submission has all its keys; those no rule
    read before are read leniently all the same)."""
    return Observation(
        item_key=data.get("itemKey", ""),
        retailer_slug=data.get("retailerSlug", ""),
        product_name=data["productName"],
        product_url=data["productUrl"],
        ean=data.get("ean"),
        price_cents=data["priceCents"],
        unit_price_cents=data["unitPriceCents"],
        unit_price_unit=data.get("unitPriceUnit", ""),
        in_stock=data.get("inStock", True),
    )


def product_url(data: dict[str, Any] | None) -> str:
    """The stored submission's product URL; empty when it has none (not a price observation)."""
    return str((data or {}).get("productUrl", ""))


def product_name(data: dict[str, Any] | None) -> str | None:
    """The stored submission's product name, if it has one (a spot-check's has none)."""
    name = (data or {}).get("productName")
    return str(name) if name else None
