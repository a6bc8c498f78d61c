"""Retailers as reference data (placeholder until the retailer commands land)."""

from __future__ import annotations


def host_belongs(host: str, domain: str) -> bool:
    host = host.lower().rstrip(".")
    domain = domain.lower().rstrip(".")
    return bool(host) and (host == domain or host.endswith("." + domain))
