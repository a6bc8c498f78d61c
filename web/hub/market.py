"""Mounts the market routes (products, cart, fuel, quote rates) on the hub's registry."""

from web.hub import market_fuel, market_products, market_quotes  # noqa: F401
