"""The aiohttp front end: the hub app (8080) and the document app (8081)."""
