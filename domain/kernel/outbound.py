"""One guard for every outgoing connection: market pages and fuel feeds, submitted product URLs (the work
validator), the escalation webhook and the SMTP server.

- Only http and https URLs, without credentials (SMTP's own schemes are checked by mail.py).
- The host is resolved once and every address it resolves to is checked (`refusal`): loopback, private,
  link-local, shared (CGNAT), multicast, reserved and unspecified addresses are refused, and so are IPv6
  forms that carry one (IPv4-mapped and -compatible, NAT64 64:ff9b::/96, 6to4 2002::/16) or that are not
  routable (Teredo, local-use NAT64, site-local, unique local). `CONCORD_OUTBOUND_ALLOW_PRIVATE` lifts the
  check (tests, labs); the resolving and pinning stay.
- The connection goes to a checked address: the request is sent to that IP with the original Host header,
  and TLS sends SNI for, and verifies the certificate against, the original name. A DNS answer that
  changes after the check (rebinding) is never consulted.
- Redirects are followed by hand, each target through the same checks; the number of redirects, the total
  time and the body read are bounded. Proxies and .netrc from the environment are ignored.
- Destinations the operator configured (`configured=True`: the escalation webhook, the SMTP server) may
  resolve to loopback or private addresses when their host is listed in `CONCORD_OUTBOUND_TRUSTED_HOSTS`:
  an internal reviewer service or mail relay is normal. The listing never applies to URLs that came from
  users (market pages, submitted URLs) nor to redirects.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

import httpx

from domain.kernel.settings import get_settings

REDIRECTS = frozenset({301, 302, 303, 307, 308})
DEFAULT_PORTS = {"http": 80, "https": 443}

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Lookup = Callable[[str, int], Awaitable[list[str]]]


class FetchError(Exception):
    """A request that produced no usable response; `kind` is a stable short code: invalid_url,
    blocked_address, dns_error, connect_error, timeout, too_large, redirect_limit."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


REFUSED = frozenset({"invalid_url", "blocked_address"})  # kinds no retry can change, only the settings


@dataclass(frozen=True)
class Fetched:
    status: int
    url: str  # final URL after redirects (with the host name, not the address connected to)
    content_type: str
    body: bytes
    redirects: int
    method: str = "GET"


@dataclass(frozen=True)
class Limits:
    timeout_seconds: float  # total, redirects included
    max_bytes: int
    max_redirects: int
    user_agent: str


@dataclass(frozen=True)
class Target:
    """A checked URL: `host` is the ASCII (IDNA) name or the address literal, as resolved and as sent in
    SNI; `netloc` is what the Host header carries."""

    url: httpx.URL
    host: str
    port: int
    netloc: str


async def system_lookup(host: str, port: int) -> list[str]:
    """The addresses a name resolves to (the system resolver), in its order, without repeats."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    found: list[str] = []
    for family, _, _, _, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):  # only these carry an address text
            raise FetchError("blocked_address", f"{host} resolves to a non-IP address")
        found.append(str(sockaddr[0]))
    return list(dict.fromkeys(found))


# The one place names are resolved; tests point it at a fake DNS answer.
lookup: Lookup = system_lookup

# How server certificates are verified; unset: httpx's default trust store. Tests trust their own CA here.
tls_verify: ssl.SSLContext | None = None


@functools.cache
def _default_tls() -> ssl.SSLContext:
    """One context for every request: building one (loading the CA bundle) costs tens of milliseconds."""
    return httpx.create_ssl_context(trust_env=False)


_SHARED = ipaddress.IPv4Network("100.64.0.0/10")
_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NEVER_V6 = (  # IPv6 ranges refused whatever they carry
    (ipaddress.IPv6Network("64:ff9b:1::/48"), "local-use NAT64"),
    (ipaddress.IPv6Network("2001::/32"), "Teredo"),
    (ipaddress.IPv6Network("fec0::/10"), "site-local"),
    (ipaddress.IPv6Network("fc00::/7"), "unique local (private)"),
)


def refusal(address: str | Address) -> str | None:
    """Why an address must not be contacted ("loopback", "NAT64 form of 10.0.0.1, private", ...), or None
    for a public one. Explicit checks first: the standard library's `is_global` varies between Python
    versions and calls multicast and NAT64 addresses global."""
    try:
        addr = ipaddress.ip_address(address) if isinstance(address, str) else address
    except ValueError:
        return "not an IP address"
    if isinstance(addr, ipaddress.IPv6Address) and not (addr.is_unspecified or addr.is_loopback):
        embedded, form = _embedded_ipv4(addr)
        if form == "IPv4-compatible form":
            return f"{form} of {embedded}, deprecated"
        if embedded is not None:
            why = refusal(embedded)
            return f"{form} of {embedded}, {why}" if why else None
        for network, why in _NEVER_V6:
            if addr in network:
                return why
    return _plain_refusal(addr)


def _embedded_ipv4(addr: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address | None, str]:
    if addr.ipv4_mapped is not None:
        return addr.ipv4_mapped, "IPv4-mapped form"
    if addr in _COMPATIBLE:
        return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF), "IPv4-compatible form"
    if addr in _NAT64:
        return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF), "NAT64 form"
    if addr.sixtofour is not None:
        return addr.sixtofour, "6to4 form"
    return None, ""


def _plain_refusal(addr: Address) -> str | None:
    if addr.is_unspecified:
        return "unspecified"
    if addr.is_loopback:
        return "loopback"
    if addr.is_link_local:
        return "link-local"
    if addr.is_multicast:
        return "multicast"
    if isinstance(addr, ipaddress.IPv4Address) and addr in _SHARED:
        return "shared (carrier-grade NAT)"
    if addr.is_private:
        return "private"
    if addr.is_reserved:
        return "reserved"
    if not addr.is_global:
        return "not globally routable"
    return None


def normal_host(host: str) -> str:
    """A host as compared with `CONCORD_OUTBOUND_TRUSTED_HOSTS`: lower case, no trailing dot or IPv6
    brackets, an address in its compressed form."""
    name = host.strip().lower().rstrip(".").removeprefix("[").removesuffix("]")
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return name


def trusted(host: str) -> bool:
    """Is `host` listed in CONCORD_OUTBOUND_TRUSTED_HOSTS (case, trailing dot and address form aside)?"""
    return normal_host(host) in {normal_host(h) for h in get_settings().outbound_trusted_hosts}


def target(url: str | httpx.URL) -> Target:
    """Parse and check a URL before anything is resolved; refuses all but http(s) plainly."""
    shown = str(url)[:200]
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        raise FetchError("invalid_url", f"not a valid URL: {shown}") from None
    if parsed.scheme not in DEFAULT_PORTS:
        scheme = f"{parsed.scheme}:" if parsed.scheme else "a URL without a scheme"
        raise FetchError("invalid_url", f"only http and https URLs are contacted, not {scheme} {shown}")
    host = parsed.raw_host.decode("ascii")
    if not host:
        raise FetchError("invalid_url", f"no host in {shown}")
    if parsed.userinfo:
        raise FetchError("invalid_url", "URLs with credentials are refused")
    port = parsed.port or DEFAULT_PORTS[parsed.scheme]
    if not 0 < port < 65536:
        raise FetchError("invalid_url", f"bad port in {shown}")
    return Target(url=parsed, host=host, port=port, netloc=parsed.netloc.decode("ascii"))


def _literal(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return None


async def resolve(host: str, port: int, *, configured: bool = False) -> list[str]:
    """Resolve `host` once and check every address it resolves to; the addresses returned are the only
    ones the caller may connect to. `configured`: the host comes from the operator's settings, so a listed
    trusted host may be on loopback or private addresses (never unspecified or multicast ones)."""
    literal = _literal(host)
    if literal is not None:
        addresses = [literal]
    else:
        try:
            addresses = await lookup(host, port)
        except OSError as exc:
            raise FetchError("dns_error", f"cannot resolve {host}: {exc}") from None
        if not addresses:
            raise FetchError("dns_error", f"{host} has no address")
    if get_settings().outbound_allow_private:
        return addresses
    listed = configured and trusted(host)
    for address in addresses:
        why = refusal(address)
        if why is None:
            continue
        if listed and why not in ("unspecified", "multicast"):
            continue
        said = "the URL's host is" if literal is not None else f"{host} resolves to"
        hint = (
            f"; if it is your own service, list {normal_host(host)} in CONCORD_OUTBOUND_TRUSTED_HOSTS"
            if configured and not listed
            else ""
        )
        raise FetchError("blocked_address", f"{said} non-public address {address} ({why}){hint}")
    return addresses


async def request(
    method: str,
    url: str,
    *,
    limits: Limits,
    headers: Mapping[str, str] | None = None,
    content: bytes | None = None,
    read_body: bool = True,
    configured: bool = False,
) -> Fetched:
    """Send one request through the guard, following redirects (each one checked again) up to
    `limits.max_redirects`, and read the body up to `limits.max_bytes` when `read_body`. Redirects keep
    the method; a caller that sends a body passes max_redirects=0. `configured` applies to the first hop
    only: a redirect is never the operator's choice."""
    sent = {"User-Agent": limits.user_agent, **(headers or {})}
    try:
        async with asyncio.timeout(limits.timeout_seconds):
            async with httpx.AsyncClient(
                follow_redirects=False,
                timeout=limits.timeout_seconds,
                trust_env=False,
                verify=tls_verify or _default_tls(),
            ) as client:
                current = target(url)
                for hop in range(limits.max_redirects + 1):
                    addresses = await resolve(current.host, current.port, configured=configured and hop == 0)
                    resp = await _send(client, method, current, addresses, sent, content)
                    try:
                        location = resp.headers.get("location")
                        if resp.status_code in REDIRECTS and location:
                            if hop == limits.max_redirects:
                                raise _too_many(limits.max_redirects, resp.status_code, location)
                            current = target(current.url.join(location))  # httpx refuses a bad Location first
                            continue
                        body = await _read_capped(resp, limits.max_bytes) if read_body else b""
                        return Fetched(
                            status=resp.status_code,
                            url=str(current.url),
                            content_type=resp.headers.get("content-type", ""),
                            body=body,
                            redirects=hop,
                            method=method,
                        )
                    finally:
                        await resp.aclose()
                raise AssertionError("unreachable: the last hop returns or raises")  # pragma: no cover
    except TimeoutError:
        raise FetchError("timeout", f"no complete answer within {limits.timeout_seconds:g}s") from None
    except httpx.TimeoutException:
        raise FetchError("timeout", f"no complete answer within {limits.timeout_seconds:g}s") from None
    except httpx.HTTPError as exc:
        raise FetchError("connect_error", f"{type(exc).__name__}: {exc}"[:500]) from None


async def _send(
    client: httpx.AsyncClient,
    method: str,
    to: Target,
    addresses: list[str],
    headers: Mapping[str, str],
    content: bytes | None,
) -> httpx.Response:
    """Send to the checked addresses in turn (the next one only when connecting failed), never to a
    fresh resolution of the name."""
    by_name = _literal(to.host) is None
    extensions = {"sni_hostname": to.host.rstrip(".")} if by_name and to.url.scheme == "https" else {}
    failed: httpx.TransportError | None = None
    for address in addresses:
        req = client.build_request(
            method,
            to.url.copy_with(host=address),
            headers={**headers, "Host": to.netloc},
            content=content,
            extensions=extensions,
        )
        try:
            return await client.send(req, stream=True)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            failed = exc
    assert failed is not None  # resolve() never returns an empty list
    raise failed


def _too_many(limit: int, status: int, location: str) -> FetchError:
    if limit == 0:
        return FetchError(
            "redirect_limit",
            f"answered {status} redirecting to {location[:200]}; redirects are not followed here",
        )
    return FetchError("redirect_limit", f"more than {limit} redirects")


async def _read_capped(resp: httpx.Response, limit: int) -> bytes:
    declared = resp.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise FetchError("too_large", f"response of {declared} bytes exceeds the {limit}-byte cap")
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.aiter_bytes():  # decoded: a compressed body is capped at its real size
        size += len(chunk)
        if size > limit:
            raise FetchError("too_large", f"response exceeds the {limit}-byte cap")
        chunks.append(chunk)
    return b"".join(chunks)
