"""Retailers as reference data: operators add them (`concord market retailers add`), and a product page
belongs to a retailer when its host is the retailer's domain or one of its subdomains (`host_belongs`)."""

from __future__ import annotations

import ipaddress
import re
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import audit
from domain.kernel.clock import iso, utcnow
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest, Conflict
from domain.market.models import Retailer

SLUG = re.compile(r"^[a-z0-9-]{2,64}$")
LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
MAX_HOST = 253


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _ascii_host(host: str) -> str | None:
    """A host name in lower-case ASCII (IDNA for non-ASCII labels), or None if it cannot be one."""
    host = host.strip().rstrip(".").lower()
    if not host:
        return None
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii").lower()
        except UnicodeError:
            return None
    return host


def _strip_port(value: str) -> str:
    """The host of `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address."""
    value = value.strip()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value[1:]
    if value.count(":") == 1:
        return value.split(":", 1)[0]
    return value


def normalise_domain(raw: str) -> str:
    """The host named by a bare host (`shop.example`, `shop.example:8080`) or a URL
    (`https://shop.example/x`): lower-case, IDNA-encoded, without port, path or trailing dot; an IP
    address in its canonical form. 400 naming `domain` when there is none."""
    text = raw.strip()
    if "\x00" in text:
        raise BadRequest("domain: must not contain NUL characters", field="domain")
    try:
        parts = urlsplit(text if "://" in text else "//" + text)
        host = parts.hostname  # lower-case, without user info, port or brackets
    except ValueError:
        host = None
    ip = _ip(host) if host else None
    if ip is not None:
        return ip.compressed
    name = _ascii_host(host) if host else None
    if (
        name is None
        or len(name) > MAX_HOST
        or not all(LABEL.match(label) for label in name.split("."))
        or name.split(".")[-1].isdigit()  # 256.1.1.1 and the like: neither an address nor a name
    ):
        raise BadRequest(
            f"domain: {raw.strip()[:200]!r} is not a host name, IP address or URL with one", field="domain"
        )
    return name


def host_belongs(host: str, domain: str) -> bool:
    """Whether `host` is `domain` or one of its subdomains: case-insensitive, a trailing dot ignored, a
    port (on either) never part of the comparison, IDNA and Unicode forms equal. An IP-address domain
    matches only the same address."""
    h, d = _strip_port(host), _strip_port(domain)
    h_ip, d_ip = _ip(h), _ip(d)
    if h_ip is not None or d_ip is not None:
        return h_ip is not None and h_ip == d_ip
    h_name, d_name = _ascii_host(h), _ascii_host(d)
    if not h_name or not d_name:
        return False
    return h_name == d_name or h_name.endswith("." + d_name)


def public(retailer: Retailer) -> dict[str, Any]:
    return {
        "slug": retailer.slug,
        "name": retailer.name,
        "domain": retailer.domain,
        "demo": retailer.demo,
        "createdAt": iso(retailer.created_at),
    }


async def add_retailer(
    session: AsyncSession, ctx: Context, *, slug: str, name: str, domain: str
) -> dict[str, Any]:
    """A new retailer (no delivery fee, no pickup until set otherwise); 409 if the slug is taken."""
    slug = slug.strip()
    if not SLUG.match(slug):
        raise BadRequest(
            "slug: 2 to 64 characters among lower-case letters, digits and '-'",
            code="invalid_field",
            field="slug",
        )
    name = " ".join(name.split())
    if not 2 <= len(name) <= 200 or "\x00" in name:
        raise BadRequest("name: 2 to 200 characters, no NUL", code="invalid_field", field="name")
    host = normalise_domain(domain)
    existing = await session.get(Retailer, slug)
    if existing is not None:
        raise Conflict(
            f"retailer {slug!r} exists ({existing.name}, {existing.domain}); changing a retailer is not "
            "supported yet: choose another slug",
            code="retailer_exists",
            field="slug",
        )
    retailer = Retailer(slug=slug, name=name, domain=host, demo=False, created_at=utcnow())
    session.add(retailer)
    await session.flush()
    audit.record(session, ctx, "market.retailer.add", "retailer", slug, after=public(retailer))
    return public(retailer)


async def list_retailers(session: AsyncSession) -> list[dict[str, Any]]:
    return [public(r) for r in await session.scalars(select(Retailer).order_by(Retailer.slug))]
