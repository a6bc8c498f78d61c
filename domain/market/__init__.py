"""Market data: catalogue, price scraping, cart optimisation, fuel prices and quote rates."""
