"""Outgoing HTTP for market data (product pages, fuel feeds, submitted product URLs): the kernel's outbound
guard (domain/kernel/outbound.py: http(s) only, every address checked, the checked address connected to,
every redirect checked again) with the market's limits and its honest User-Agent."""

from __future__ import annotations

from domain.kernel import outbound
from domain.kernel.outbound import Fetched, FetchError
from domain.market.settings import get_market_settings

__all__ = ["FetchError", "Fetched", "fetch", "probe"]

PAGE_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"


def _limits() -> outbound.Limits:
    cfg = get_market_settings()
    return outbound.Limits(
        timeout_seconds=cfg.scrape_timeout_seconds,
        max_bytes=cfg.scrape_max_bytes,
        max_redirects=cfg.scrape_max_redirects,
        user_agent=cfg.user_agent,
    )


async def fetch(url: str, *, accept: str = PAGE_ACCEPT) -> Fetched:
    """GET a page, following redirects hop by hop, and read its body (capped)."""
    return await outbound.request("GET", url, limits=_limits(), headers={"Accept": accept})


async def probe(url: str) -> Fetched:
    """Does the page answer? HEAD first; a server that refuses or mishandles HEAD (405, 501, a WAF's
    403) gets a GET whose body is not read. The answer is the last hop's status and URL."""
    headers = {"Accept": PAGE_ACCEPT}
    head = await outbound.request("HEAD", url, limits=_limits(), headers=headers, read_body=False)
    if 200 <= head.status < 300:
        return head
    return await outbound.request("GET", url, limits=_limits(), headers=headers, read_body=False)
