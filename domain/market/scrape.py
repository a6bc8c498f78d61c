"""Price scraping: a job fetches one product page and records the price it states; a sweep enqueues
jobs for products whose newest price is stale. Every failure (no price, redirects beyond the limit,
4xx/5xx, timeouts, refused addresses, oversized pages) is recorded on the product and ends the job
cleanly: the product stays stale, so a later sweep tries again. The page is fetched with no transaction
open (the job's `prepare` step); what it found is recorded in the transaction that marks the job done."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import audit, outbox
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.db import Database
from domain.kernel.errors import Conflict, NotFound
from domain.kernel.ids import canonical_id
from domain.kernel.models import OutboxJob
from domain.kernel.outbox import Job
from domain.market import outbound
from domain.market.catalog import record_observation
from domain.market.extract import NoPrice, Offer, extract_offer
from domain.market.models import Product
from domain.market.settings import get_market_settings


def _set(product: Product, status: str, error: str | None) -> None:
    product.last_scraped_at = utcnow()
    product.scrape_status = status
    product.scrape_error = error[:2000] if error else None


async def _outcome(url: str) -> tuple[str, str | None, Offer | None]:
    """Fetch and read one page: (status, reason, offer). Touches no database."""
    try:
        page = await outbound.fetch(url)
    except outbound.FetchError as exc:
        return exc.kind, exc.detail, None
    if page.status != 200:
        kind = "" if page.status >= 400 else ", not a page"
        return f"http_{page.status}", f"{page.url} answered HTTP {page.status}{kind}", None
    if page.content_type and "html" not in page.content_type.lower():
        return "not_html", f"content type {page.content_type!r} is not a web page", None
    try:
        offer = extract_offer(page.body, page.url)
    except NoPrice as exc:
        return "no_price", str(exc), None
    note = f"followed {page.redirects} redirect(s) to {page.url}" if page.redirects else None
    return "ok", note, offer


@dataclass(frozen=True)
class Fetched:
    """What one fetch of a product page found (`prepare_scrape`), for `scrape_price` to record."""

    status: str
    reason: str | None
    offer: Offer | None


async def prepare_scrape(db: Database, payload: dict[str, Any]) -> Fetched | None:
    """The fetch, with no transaction open: no lock (SQLite's single writer lock, or a row's) is held across
    a request that may take the whole timeout. None when the product is gone."""
    async with db.read() as session:
        url = await session.scalar(select(Product.url).where(Product.id == payload.get("product_id")))
    if url is None:
        return None
    return Fetched(*await _outcome(url))


async def scrape_price(session: AsyncSession, payload: dict[str, Any]) -> None:
    """Record what the fetch found, in the transaction that marks the job done."""
    fetched = payload.get(outbox.PREPARED)
    if not isinstance(fetched, Fetched):
        return
    product = await session.get(
        Product, payload.get("product_id"), with_for_update=True, populate_existing=True
    )
    if product is None:
        return
    if fetched.offer is not None:
        await record_observation(
            session,
            product,
            price_cents=fetched.offer.price_cents,
            in_stock=fetched.offer.in_stock,
            source="scrape",
        )
    _set(product, fetched.status, fetched.reason)


# The fetch is bounded by the scrape timeout per hop; the lease is renewed while it runs anyway.
SCRAPE_JOB = Job("market.scrape_price", scrape_price, prepare=prepare_scrape)


@dataclass(frozen=True)
class Queued:
    """A scrape of a product's page, queued as the job `job_id`."""

    product_id: str
    job_id: str


async def request_scrape(session: AsyncSession, ctx: Context, product_id: str) -> Queued:
    key = canonical_id(product_id)
    product = await session.get(Product, key) if key else None
    if product is None:
        raise NotFound(f"product {product_id!r} not found", code="product_not_found")
    if not product.scrape_enabled:
        raise Conflict(
            f"product {product_id} has no page to scrape (demo data or disabled)", code="not_scrapeable"
        )
    job_id = outbox.enqueue(session, SCRAPE_JOB, {"product_id": product.id})
    audit.record(session, ctx, "market.scrape.request", "product", product.id, after={"job": job_id})
    return Queued(product.id, job_id)


async def _queued_products(session: AsyncSession) -> set[str]:
    rows = await session.scalars(
        select(OutboxJob.payload).where(
            OutboxJob.actor == SCRAPE_JOB.name, OutboxJob.status.in_(["pending", "sent"])
        )
    )
    return {str(p.get("product_id")) for p in rows if isinstance(p, dict)}


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
