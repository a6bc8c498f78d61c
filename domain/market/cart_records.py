"""A cart optimisation's request and solution as typed records (domain/market/cart.py makes them;
cart_stored.py keeps them)."""

from __future__ import annotations

from dataclasses import dataclass

from domain.market.models import Product, Retailer


@dataclass(frozen=True)
class CartLine:
    """An item to buy: the words a product must match, and how many."""

    query: str
    quantity: int


@dataclass(frozen=True)
class CartRequest:
    """What to buy; with `prefer_pickup`, retailers that offer pickup are used for pickup."""

    items: tuple[CartLine, ...]
    prefer_pickup: bool = False


@dataclass(frozen=True)
class BasketLine:
    """An item bought as the product chosen for it."""

    query: str
    quantity: int
    product: Product


@dataclass(frozen=True)
class Basket:
    """What is bought at one retailer, fulfilled by delivery or pickup (amounts in cents)."""

    retailer: Retailer
    fulfilment: str
    lines: list[BasketLine]
    subtotal_cents: int
    fee_cents: int


@dataclass(frozen=True)
class SingleRetailer:
    """The cheapest way to buy every matched item at one retailer (amounts in cents)."""

    retailer: Retailer
    fulfilment: str
    subtotal_cents: int
    fee_cents: int
    total_cents: int


@dataclass(frozen=True)
class CartSolution:
    """The optimum: one basket per retailer bought from (by slug), the items nothing matched, and what the
    solver took (ms)."""

    prefer_pickup: bool
    baskets: list[Basket]
    items_total_cents: int
    total_cents: int
    best_single: SingleRetailer | None
    unmatched: list[CartLine]
    matched_items: int
    solver: str
    solve_ms: float
