"""Cart optimisation requests: recorded, run as a background job, read back by id.

Matching: an item's query matches products whose name, brand or category contain every query word,
that are priced and in stock. At each retailer only the cheapest match matters (fees depend on the
retailer, not the product), so each item offers one candidate per retailer. With preferPickup, a
retailer that offers pickup is used for pickup (its pickup fee, no delivery threshold) and only its
pickup-available products are candidates; other retailers deliver.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import audit, outbox
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest, NotFound
from domain.kernel.ids import canonical_id
from domain.kernel.outbox import Job
from domain.market import cart_solver
from domain.market.catalog import WORD, cents, is_stale, match_clause
from domain.market.models import CartOptimisation, Product, Retailer

MAX_ITEMS = 100  # items in one cart optimisation request (the web model's bound)


async def create(session: AsyncSession, ctx: Context, request: dict[str, Any]) -> CartOptimisation:
    for n, item in enumerate(request["items"]):
        if not WORD.search(item["query"].lower()):
            raise BadRequest(
                f"items.{n}.query: must contain at least one letter or digit", field=f"items.{n}.query"
            )
    cart = CartOptimisation(request=request, status="pending", created_at=utcnow())
    session.add(cart)
    await session.flush()
    outbox.enqueue(session, CART_JOB, {"cart_id": cart.id})
    audit.record(session, ctx, "market.cart.optimise", "cart", cart.id, after=request)
    return cart


async def get(session: AsyncSession, cart_id: str) -> CartOptimisation:
    key = canonical_id(cart_id)
    cart = await session.get(CartOptimisation, key) if key else None
    if cart is None:
        raise NotFound(f"cart optimisation {cart_id!r} not found", code="cart_not_found")
    return cart


def to_dict(cart: CartOptimisation, url: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": cart.id,
        "status": cart.status,
        "url": url,
        "createdAt": iso(cart.created_at),
    }
    if cart.status == "done" and cart.result is not None:
        body.update(cart.result)
        body["finishedAt"] = iso(cart.finished_at)
    elif cart.status == "failed":
        body["error"] = cart.error
    return body


async def _candidates(
    session: AsyncSession, query: str, retailers: dict[str, Retailer], prefer_pickup: bool
) -> dict[str, Product]:
    rows = (
        await session.scalars(
            select(Product)
            .where(*match_clause(query), Product.price_cents.is_not(None), Product.in_stock.is_(True))
            .order_by(Product.price_cents, Product.id)
        )
    ).all()
    best: dict[str, Product] = {}
    for product in rows:
        retailer = retailers.get(product.retailer_slug)
        if retailer is None:
            continue
        if prefer_pickup and retailer.pickup_available and not product.pickup_available:
            continue
        if product.retailer_slug not in best:
            best[product.retailer_slug] = product
    return best


def _terms(retailer: Retailer, prefer_pickup: bool) -> tuple[str, cart_solver.Terms]:
    if prefer_pickup and retailer.pickup_available:
        return "pickup", cart_solver.Terms(fee=retailer.pickup_fee_cents)
    return "delivery", cart_solver.Terms(
        fee=retailer.delivery_fee_cents, threshold=retailer.free_delivery_over_cents
    )


async def optimise(
    session: AsyncSession, request: dict[str, Any], *, release: bool = False
) -> dict[str, Any]:
    """Match, solve and describe the result. With `release`, the session's transaction is ended once the
    catalogue has been read, so that no lock is held while the solver runs."""
    prefer_pickup = bool(request.get("preferPickup"))
    retailers = {r.slug: r for r in (await session.scalars(select(Retailer))).all()}
    modes = {slug: _terms(r, prefer_pickup) for slug, r in retailers.items()}
    matched: list[tuple[dict[str, Any], dict[str, Product]]] = []
    unmatched = []
    for item in request["items"]:
        offers = await _candidates(session, item["query"], retailers, prefer_pickup)
        if offers:
            matched.append((item, offers))
        else:
            unmatched.append({"query": item["query"], "quantity": item["quantity"]})
    costs = [{r: p.price_cents * item["quantity"] for r, p in offers.items()} for item, offers in matched]
    terms = {slug: t for slug, (_mode, t) in modes.items()}
    if release:
        await session.commit()
    started = time.perf_counter()
    solution = await asyncio.to_thread(cart_solver.solve, costs, terms)
    single = cart_solver.best_single(costs, terms)
    solve_ms = round((time.perf_counter() - started) * 1000, 1)

    baskets: dict[str, dict[str, Any]] = {}
    for (item, offers), slug in zip(matched, solution.choice, strict=True):
        product, retailer = offers[slug], retailers[slug]
        basket = baskets.setdefault(
            slug,
            {"retailer": slug, "retailerName": retailer.name, "fulfilment": modes[slug][0], "items": []},
        )
        basket["items"].append(
            {
                "query": item["query"],
                "quantity": item["quantity"],
                "productId": product.id,
                "productName": product.name,
                "productUrl": product.url,
                "unitPrice": cents(product.price_cents),
                "lineTotal": cents((product.price_cents or 0) * item["quantity"]),
                "observedAt": iso(product.observed_at),
                "stale": is_stale(product.observed_at),
            }
        )
    for slug, basket in baskets.items():
        basket["subtotal"] = cents(solution.subtotals[slug])
        basket["fee"] = cents(solution.fees[slug])
        basket["total"] = cents(solution.subtotals[slug] + solution.fees[slug])
    items_total = sum(solution.subtotals.values())
    single_body = None
    if single is not None:
        slug = single.choice[0]
        single_body = {
            "retailer": slug,
            "retailerName": retailers[slug].name,
            "fulfilment": modes[slug][0],
            "subtotal": cents(single.subtotals[slug]),
            "fee": cents(single.fees[slug]),
            "total": cents(single.total),
        }
    return {
        "preferPickup": prefer_pickup,
        "baskets": sorted(baskets.values(), key=lambda b: b["retailer"]),
        "itemsTotal": cents(items_total),
        "feesTotal": cents(solution.total - items_total),
        "total": cents(solution.total),
        "bestSingleRetailer": single_body,
        "saving": cents(single.total - solution.total) if single is not None else None,
        "unmatched": unmatched,
        "matchedItems": len(matched),
        "optimal": True,
        "solver": "HiGHS (scipy.optimize.milp)",
        "solveMs": solve_ms,
    }


async def mark_failed(session: AsyncSession, payload: dict[str, Any], reason: str) -> None:
    cart = await session.get(CartOptimisation, payload.get("cart_id"))
    if cart is not None and cart.status == "pending":
        cart.status = "failed"
        cart.error = reason
        cart.finished_at = utcnow()


async def run_cart(session: AsyncSession, payload: dict[str, Any]) -> None:
    cart = await session.get(CartOptimisation, payload.get("cart_id"))
    if cart is None or cart.status != "pending":
        return
    result = await optimise(session, dict(cart.request), release=True)
    cart = await session.get(CartOptimisation, cart.id, with_for_update=True, populate_existing=True)
    if cart is None or cart.status != "pending":
        return  # a duplicate delivery finished first
    cart.result = result
    cart.status = "done"
    cart.finished_at = utcnow()


CART_JOB = Job("market.cart_optimise", run_cart, on_failure=mark_failed)
