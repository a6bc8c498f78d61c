"""A cart optimisation's stored formats, built (and read back) here and nowhere else: the request it keeps
(its JSON column, also the `after` of its market.cart.optimise audit entry) and the result it keeps once
solved (its JSON column, which the cart's answer carries as it was stored, for carts solved long ago too).

A key's name, its order and its value's format are part of the stored record, so they never change. The
wire model (web/hub/market/schemas.py `CartResult`) reads a cart from its row."""

from __future__ import annotations

from typing import Any

from domain.kernel.clock import iso
from domain.market.cart_records import Basket, CartLine, CartRequest, CartSolution, SingleRetailer
from domain.market.catalog import cents, is_stale


def request(r: CartRequest) -> dict[str, Any]:
    """Stored format: the request, as the web body's fields were always kept."""
    return {
        "items": [{"query": line.query, "quantity": line.quantity} for line in r.items],
        "preferPickup": r.prefer_pickup,
    }


def read_request(stored: dict[str, Any]) -> CartRequest:
    """The request a cart keeps (`request`), read back for the job that solves it."""
    lines = tuple(CartLine(item["query"], item["quantity"]) for item in stored["items"])
    return CartRequest(lines, bool(stored.get("preferPickup")))


def result(s: CartSolution) -> dict[str, Any]:
    """Stored format: a solved cart's result (AUD amounts), which its answers carry as stored."""
    items_total = s.items_total_cents
    return {
        "preferPickup": s.prefer_pickup,
        "baskets": [_basket(b) for b in s.baskets],
        "itemsTotal": cents(items_total),
        "feesTotal": cents(s.total_cents - items_total),
        "total": cents(s.total_cents),
        "bestSingleRetailer": None if s.best_single is None else _single(s.best_single),
        "saving": cents(s.best_single.total_cents - s.total_cents) if s.best_single is not None else None,
        "unmatched": [{"query": line.query, "quantity": line.quantity} for line in s.unmatched],
        "matchedItems": s.matched_items,
        "optimal": True,
        "solver": s.solver,
        "solveMs": s.solve_ms,
    }


def _basket(b: Basket) -> dict[str, Any]:
    items = [
        {
            "query": line.query,
            "quantity": line.quantity,
            "productId": line.product.id,
            "productName": line.product.name,
            "productUrl": line.product.url,
            "unitPrice": cents(line.product.price_cents),
            "lineTotal": cents((line.product.price_cents or 0) * line.quantity),
            "observedAt": iso(line.product.observed_at),
            "stale": is_stale(line.product.observed_at),
        }
        for line in b.lines
    ]
    return {
        "retailer": b.retailer.slug,
        "retailerName": b.retailer.name,
        "fulfilment": b.fulfilment,
        "items": items,
        "subtotal": cents(b.subtotal_cents),
        "fee": cents(b.fee_cents),
        "total": cents(b.subtotal_cents + b.fee_cents),
    }


def _single(s: SingleRetailer) -> dict[str, Any]:
    return {
        "retailer": s.retailer.slug,
        "retailerName": s.retailer.name,
        "fulfilment": s.fulfilment,
        "subtotal": cents(s.subtotal_cents),
        "fee": cents(s.fee_cents),
        "total": cents(s.total_cents),
    }
