"""Price scraping: a job fetches one product page and records the price it states; a sweep enqueues
jobs for products whose newest price is stale. Every failure (no price, redirects beyond the limit,
4xx/5xx, timeouts, refused addresses, oversized pages) is recorded on the product and ends the job
cleanly: the product stays stale, so a later sweep tries again."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain import audit, outbox
from domain.clock import utcnow
from domain.context import Context
from domain.errors import NotFound
from domain.market import outbound
from domain.market.catalog import record_observation
from domain.market.extract import NoPrice, extract_offer
from domain.market.settings import get_market_settings
from domain.models import OutboxJob, Product
from domain.sweeps import sweep

SCRAPE_JOB = "market.scrape_price"


def _set(product: Product, status: str, error: str | None) -> None:
    product.last_scraped_at = utcnow()
    product.scrape_status = status
    product.scrape_error = error[:2000] if error else None


@outbox.handler(SCRAPE_JOB)
async def scrape_price(session: AsyncSession, payload: dict[str, Any]) -> None:
    product = await session.get(Product, payload.get("product_id"))
    if product is None:
        return
    try:
        page = await outbound.fetch(product.url)
    except outbound.FetchError as exc:
        _set(product, exc.kind, exc.detail)
        return
    if page.status >= 400:
        _set(product, f"http_{page.status}", f"{page.url} answered HTTP {page.status}")
        return
    if page.status != 200:
        _set(product, f"http_{page.status}", f"{page.url} answered HTTP {page.status}, not a page")
        return
    if "html" not in page.content_type.lower() and page.content_type:
        _set(product, "not_html", f"content type {page.content_type!r} is not a web page")
        return
    try:
        offer = extract_offer(page.body, page.url)
    except NoPrice as exc:
        _set(product, "no_price", str(exc))
        return
    # Lock the row only now (not across the fetch) so that concurrent price writers are ordered.
    await session.refresh(product, with_for_update=True)
    await record_observation(
        session, product, price_cents=offer.price_cents, in_stock=offer.in_stock, source="scrape"
    )
    _set(
        product, "ok", None if not page.redirects else f"followed {page.redirects} redirect(s) to {page.url}"
    )


async def request_scrape(session: AsyncSession, ctx: Context, product_id: str) -> dict[str, Any]:
    product = await session.get(Product, product_id)
    if product is None:
        raise NotFound(f"product {product_id} not found", code="product_not_found")
    job_id = outbox.enqueue(session, SCRAPE_JOB, {"product_id": product.id})
    await audit.record(session, ctx, "market.scrape.request", "product", product.id, after={"job": job_id})
    return {"productId": product.id, "jobId": job_id, "status": "queued"}


async def _queued_products(session: AsyncSession) -> set[str]:
    rows = await session.scalars(
        select(OutboxJob.payload).where(
            OutboxJob.actor == SCRAPE_JOB, OutboxJob.status.in_(["pending", "sent"])
        )
    )
    return {str(p.get("product_id")) for p in rows if isinstance(p, dict)}


@sweep("market.refresh_stale_prices", interval_seconds=900)
async def refresh_stale(session: AsyncSession) -> int:
    """Enqueue a scrape for each stale, scrapeable product (at most a batch per run, oldest first),
    skipping products already queued or tried within the staleness window."""
    cfg = get_market_settings()
    cutoff = utcnow() - timedelta(hours=cfg.scrape_stale_hours)
    rows = (
        await session.scalars(
            select(Product)
            .where(
                Product.scrape_enabled.is_(True),
                or_(Product.observed_at.is_(None), Product.observed_at < cutoff),
                or_(Product.last_scraped_at.is_(None), Product.last_scraped_at < cutoff),
            )
            .order_by(Product.observed_at.is_not(None), Product.observed_at, Product.id)
            .limit(cfg.scrape_batch * 2)
        )
    ).all()
    queued = await _queued_products(session)
    count = 0
    for product in rows:
        if product.id in queued:
            continue
        outbox.enqueue(session, SCRAPE_JOB, {"product_id": product.id})
        count += 1
        if count >= cfg.scrape_batch:
            break
    return count
