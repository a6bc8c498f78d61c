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
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest, NotFound
from domain.kernel.ids import canonical_id
from domain.kernel.outbox import Job
from domain.market import cart_solver, cart_stored
from domain.market.cart_records import Basket, BasketLine, CartLine, CartRequest, CartSolution, SingleRetailer
from domain.market.catalog import WORD, match_clause
from domain.market.models import CartOptimisation, Product, Retailer

MAX_ITEMS = 100  # items in one cart optimisation request (the web model's bound)
SOLVER = "HiGHS (scipy.optimize.milp)"


async def create(session: AsyncSession, ctx: Context, request: CartRequest) -> CartOptimisation:
    for n, item in enumerate(request.items):
        if not WORD.search(item.query.lower()):
            raise BadRequest(
                f"items.{n}.query: must contain at least one letter or digit", field=f"items.{n}.query"
            )
    stored = cart_stored.request(request)
    cart = CartOptimisation(request=stored, status="pending", created_at=utcnow())
    session.add(cart)
    await session.flush()
    outbox.enqueue(session, CART_JOB, {"cart_id": cart.id})
    audit.record(session, ctx, "market.cart.optimise", "cart", cart.id, after=stored)
    return cart


async def get(session: AsyncSession, cart_id: str) -> CartOptimisation:
    key = canonical_id(cart_id)
    cart = await session.get(CartOptimisation, key) if key else None
    if cart is None:
        raise NotFound(f"cart optimisation {cart_id!r} not found", code="cart_not_found")
    return cart


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


async def optimise(session: AsyncSession, request: CartRequest, *, release: bool = False) -> CartSolution:
    """Match and solve. With `release`, the session's transaction is ended once the catalogue has been
    read, so that no lock is held while the solver runs."""
    prefer_pickup = request.prefer_pickup
    retailers = {r.slug: r for r in (await session.scalars(select(Retailer))).all()}
    modes = {slug: _terms(r, prefer_pickup) for slug, r in retailers.items()}
    matched: list[tuple[CartLine, dict[str, Product]]] = []
    unmatched: list[CartLine] = []
    for item in request.items:
        offers = await _candidates(session, item.query, retailers, prefer_pickup)
        if offers:
            matched.append((item, offers))
        else:
            unmatched.append(item)
    costs = [{r: (p.price_cents or 0) * item.quantity for r, p in offers.items()} for item, offers in matched]
    terms = {slug: t for slug, (_mode, t) in modes.items()}
    if release:
        await session.commit()
    started = time.perf_counter()
    solution = await asyncio.to_thread(cart_solver.solve, costs, terms)
    single = cart_solver.best_single(costs, terms)
    solve_ms = round((time.perf_counter() - started) * 1000, 1)

    lines: dict[str, list[BasketLine]] = {}
    for (item, offers), slug in zip(matched, solution.choice, strict=True):
        lines.setdefault(slug, []).append(BasketLine(item.query, item.quantity, offers[slug]))
    baskets = [
        Basket(retailers[slug], modes[slug][0], lines[slug], solution.subtotals[slug], solution.fees[slug])
        for slug in sorted(lines)
    ]
    best_single = None
    if single is not None:
        slug = single.choice[0]
        best_single = SingleRetailer(
            retailers[slug], modes[slug][0], single.subtotals[slug], single.fees[slug], single.total
        )
    return CartSolution(
        prefer_pickup=prefer_pickup,
        baskets=baskets,
        items_total_cents=sum(solution.subtotals.values()),
        total_cents=solution.total,
        best_single=best_single,
        unmatched=unmatched,
        matched_items=len(matched),
        solver=SOLVER,
        solve_ms=solve_ms,
    )


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
    solution = await optimise(session, cart_stored.read_request(cart.request), release=True)
    cart = await session.get(CartOptimisation, cart.id, with_for_update=True, populate_existing=True)
    if cart is None or cart.status != "pending":
        return  # a duplicate delivery finished first
    cart.result = cart_stored.result(solution)
    cart.status = "done"
    cart.finished_at = utcnow()


CART_JOB = Job("market.cart_optimise", run_cart, on_failure=mark_failed)
