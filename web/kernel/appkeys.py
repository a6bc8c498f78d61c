"""Typed application and request keys."""

from __future__ import annotations

from aiohttp import web

from runtime.process import Runtime
from web.kernel.ratelimit import RateLimits
from web.kernel.readcache import ReadCache

ERROR_STYLE = web.AppKey("error_style", str)
APP_NAME = web.AppKey("app_name", str)  # "hub" or "documents": the `app` label of request metrics
BODY_LIMIT = web.AppKey("body_limit", int)
RUNTIME = web.AppKey("runtime", Runtime)
# Web-only services each app attaches for itself (web/app.py), not part of the process runtime.
RATE_LIMITS = web.AppKey("rate_limits", RateLimits)
READ_CACHE = web.AppKey("read_cache", ReadCache)
REQUEST_ID = web.RequestKey("request_id", str)
