"""Mounts the market routes (products, cart, fuel, quote rates) on the hub's registry."""

from web.hub.market import fuel as market_fuel  # noqa: F401
