"""Outgoing HTTP for market data (product pages, fuel feeds, submitted product URLs), guarded against SSRF.

Every hop (the first URL and each redirect) must resolve only to public addresses unless
`outbound_allow_private` is set; the request has a total time bound, a body size cap and an honest
User-Agent. Redirects are followed by hand so that each target is checked before it is contacted.
(The check resolves the name and httpx resolves it again when connecting; a DNS answer that changes
in between is a residual risk that a pinned-address transport would close.)
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx

from domain.kernel.settings import get_settings
from domain.market.settings import get_market_settings

REDIRECTS = {301, 302, 303, 307, 308}


class FetchError(Exception):
    """A fetch that produced no usable response; `kind` is a stable short code."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


@dataclass(frozen=True)
class Fetched:
    status: int
    url: str  # final URL after redirects
    content_type: str
    body: bytes
    redirects: int
    method: str = "GET"


def check_url(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchError("invalid_url", f"not an http(s) URL: {url[:200]}")
    if parts.username or parts.password:
        raise FetchError("invalid_url", "URLs with credentials are refused")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise FetchError("invalid_url", f"bad port in {url[:200]}") from None
    return parts.hostname, port


async def check_public(host: str, port: int) -> None:
    """Refuse names that resolve to loopback, private, link-local or other non-global addresses."""
    if get_settings().outbound_allow_private:
        return
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise FetchError("dns_error", f"cannot resolve {host}: {exc}") from None
    for info in infos:
        host_addr = info[4][0]
        if not isinstance(host_addr, str):  # only AF_INET and AF_INET6 answers carry an address text
            raise FetchError("blocked_address", f"{host} resolves to a non-IP address")
        addr = ipaddress.ip_address(host_addr.split("%", 1)[0])
        if not addr.is_global or addr.is_multicast:
            raise FetchError("blocked_address", f"{host} resolves to non-public address {addr}")


async def fetch(url: str, *, accept: str = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5") -> Fetched:
    """GET a page, following redirects hop by hop, and read its body (capped)."""
    return await _request("GET", url, accept=accept, read_body=True)


async def probe(url: str) -> Fetched:
    """Does the page answer? HEAD first; a server that refuses or mishandles HEAD (405, 501, a WAF's
    403) gets a GET whose body is not read. The answer is the last hop's status and URL."""
    accept = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"
    head = await _request("HEAD", url, accept=accept, read_body=False)
    if 200 <= head.status < 300:
        return head
    return await _request("GET", url, accept=accept, read_body=False)


async def _request(method: str, url: str, *, accept: str, read_body: bool) -> Fetched:
    cfg = get_market_settings()
    headers = {"User-Agent": cfg.user_agent, "Accept": accept}
    try:
        async with asyncio.timeout(cfg.scrape_timeout_seconds):
            async with httpx.AsyncClient(
                follow_redirects=False, timeout=cfg.scrape_timeout_seconds, headers=headers
            ) as client:
                current = url
                for hop in range(cfg.scrape_max_redirects + 1):
                    host, port = check_url(current)
                    await check_public(host, port)
                    async with client.stream(method, current) as resp:
                        location = resp.headers.get("location")
                        if resp.status_code in REDIRECTS and location:
                            current = urljoin(current, location)
                            continue
                        body = await _read_capped(resp, cfg.scrape_max_bytes) if read_body else b""
                        return Fetched(
                            status=resp.status_code,
                            url=current,
                            content_type=resp.headers.get("content-type", ""),
                            body=body,
                            redirects=hop,
                            method=method,
                        )
                raise FetchError("redirect_limit", f"more than {cfg.scrape_max_redirects} redirects")
    except TimeoutError:
        raise FetchError("timeout", f"no complete answer within {cfg.scrape_timeout_seconds:g}s") from None
    except httpx.TimeoutException:
        raise FetchError("timeout", f"no complete answer within {cfg.scrape_timeout_seconds:g}s") from None
    except httpx.HTTPError as exc:
        raise FetchError("connect_error", f"{type(exc).__name__}: {exc}"[:500]) from None


async def _read_capped(resp: httpx.Response, limit: int) -> bytes:
    declared = resp.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise FetchError("too_large", f"response of {declared} bytes exceeds the {limit}-byte cap")
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise FetchError("too_large", f"response exceeds the {limit}-byte cap")
        chunks.append(chunk)
    return b"".join(chunks)
