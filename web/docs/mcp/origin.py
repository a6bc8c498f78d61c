"""DNS-rebinding guard of /mcp: a browser page of a foreign site must not reach the MCP server.

A request may carry no `Origin` (desktop and server clients send none), or the server's own origin, or one
listed in CONCORD_MCP_ALLOWED_ORIGINS. When the server listens on a loopback address, the `Host` must also
name a loopback host (or the host of an allowed origin): a rebound DNS name would otherwise make a
foreign page same-origin with the local server. Checked before authentication."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})


def _hostname(authority: str) -> str:
    """The host part of `host[:port]` (IPv6 in brackets), lower case."""
    try:
        return (urlsplit(f"//{authority}").hostname or "").lower()
    except ValueError:
        return ""


def is_loopback(host: str) -> bool:
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def normal_origin(origin: str) -> str:
    """`scheme://host[:port]` in lower case, the default port left out (how browsers send it)."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return origin.strip().lower()
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" if port is None or port == default else f"{scheme}://{host}:{port}"


def refusal(*, origin: str | None, host: str, bind_host: str, allowed: list[str]) -> str | None:
    """Why the request is refused, or None when it may go on."""
    allowed_origins = {normal_origin(o) for o in allowed}
    if bind_host and is_loopback(bind_host):
        name = _hostname(host)
        allowed_hosts = {urlsplit(o).hostname or "" for o in allowed_origins}
        if not name or not (is_loopback(name) or name in allowed_hosts):
            return (
                f"Host {host!r} is not allowed: this server listens on a loopback address and answers "
                "only loopback host names (or those of CONCORD_MCP_ALLOWED_ORIGINS)"
            )
    if origin is None:
        return None
    given = normal_origin(origin)
    # Same origin: the scheme is not compared, since behind a TLS proxy this server sees plain HTTP.
    if given in allowed_origins or given in {normal_origin(f"{s}://{host}") for s in ("http", "https")}:
        return None
    return (
        f"Origin {origin!r} is not allowed: only this server's own origin and those listed in "
        "CONCORD_MCP_ALLOWED_ORIGINS may call /mcp"
    )
