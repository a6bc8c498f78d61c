"""Typed application keys."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from web.kernel.routing import Api
    from web.runtime import Runtime

ERROR_STYLE = web.AppKey("error_style", str)
BODY_LIMIT = web.AppKey("body_limit", int)
RUNTIME: web.AppKey[Runtime] = web.AppKey("runtime")
API: web.AppKey[Api] = web.AppKey("api")
REQUEST_ID = web.RequestKey("request_id", str)
# The authenticated agent's Context, cached so a request looks its key up once.
AGENT_CONTEXT = web.RequestKey("agent_context", object)
