"""Reading a product's price from its page: schema.org JSON-LD Product/Offer first, then microdata,
then OpenGraph product price tags (parsed by extruct)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?|\.\d+")
_OUT = ("outofstock", "soldout", "discontinued")


@dataclass(frozen=True)
class Offer:
    price_cents: int
    currency: str
    in_stock: bool
    source: str  # json-ld, microdata, opengraph


class NoPrice(Exception):
    pass


def parse_price(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        amount = Decimal(str(value))
    else:
        match = _NUMBER.search(str(value))
        if not match:
            return None
        try:
            amount = Decimal(match.group(0).replace(",", ""))
        except InvalidOperation:
            return None
    return amount if Decimal("0") < amount < Decimal("1000000") else None


def _types(node: dict[str, Any]) -> list[str]:
    raw = node.get("@type", [])
    return [str(t).rsplit("/", 1)[-1].rsplit("#", 1)[-1] for t in (raw if isinstance(raw, list) else [raw])]


def _walk(node: Any) -> Any:
    """Every dict in a JSON-LD/microdata tree (handles @graph, lists and nesting)."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _offers(product: dict[str, Any]) -> list[dict[str, Any]]:
    offers = product.get("offers")
    found = [o for o in (offers if isinstance(offers, list) else [offers]) if isinstance(o, dict)]
    nested: list[dict[str, Any]] = []
    for offer in found:  # AggregateOffer may list its offers
        inner = offer.get("offers")
        nested.extend(o for o in (inner if isinstance(inner, list) else [inner]) if isinstance(o, dict))
    return found + nested


def _from_offer(offer: dict[str, Any], source: str) -> Offer | None:
    spec = offer.get("priceSpecification")
    spec = spec[0] if isinstance(spec, list) and spec else spec
    price = parse_price(offer.get("price"))
    if price is None and isinstance(spec, dict):
        price = parse_price(spec.get("price"))
    if price is None:
        price = parse_price(offer.get("lowPrice"))
    if price is None:
        return None
    currency = offer.get("priceCurrency") or (spec.get("priceCurrency") if isinstance(spec, dict) else None)
    availability = str(offer.get("availability") or "").lower()
    return Offer(
        price_cents=int((price * 100).quantize(Decimal("1"))),
        currency=str(currency or "AUD").upper(),
        in_stock=not any(word in availability for word in _OUT),
        source=source,
    )


def extract_offer(html: str | bytes, url: str) -> Offer:
    """The page's AUD offer, or NoPrice saying why none was found."""
    # Deferred: extruct (rdflib, pyRdfa) costs a process ~0.17 s of CPU at start-up; only scraping uses it.
    import extruct

    try:
        data = extruct.extract(
            html,
            base_url=url,
            syntaxes=["json-ld", "microdata", "opengraph"],
            uniform=True,
            errors="ignore",
        )
    except Exception as exc:  # extruct surfaces parser errors of many kinds on malformed pages
        raise NoPrice(f"page could not be parsed: {type(exc).__name__}") from None
    other_currency: str | None = None
    for syntax in ("json-ld", "microdata"):
        for node in _walk(data.get(syntax, [])):
            if "Product" not in _types(node):
                continue
            for raw in _offers(node):
                offer = _from_offer(raw, syntax)
                if offer is None:
                    continue
                if offer.currency != "AUD":
                    other_currency = offer.currency
                    continue
                return offer
    for og in data.get("opengraph", []):
        props = og if isinstance(og, dict) else {}
        price = parse_price(props.get("product:price:amount") or props.get("og:price:amount"))
        if price is None:
            continue
        currency = str(props.get("product:price:currency") or props.get("og:price:currency") or "AUD")
        if currency.upper() != "AUD":
            other_currency = currency.upper()
            continue
        availability = str(props.get("product:availability") or props.get("og:availability") or "")
        return Offer(
            price_cents=int((price * 100).quantize(Decimal("1"))),
            currency="AUD",
            in_stock=not any(w in availability.lower().replace(" ", "") for w in _OUT),
            source="opengraph",
        )
    if other_currency:
        raise NoPrice(f"only a {other_currency} price was found; AUD required")
    raise NoPrice("no schema.org Offer, microdata or OpenGraph price on the page")
