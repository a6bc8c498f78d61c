"""Where this server's OAuth parts live, as a client must name them: from CONCORD_PUBLIC_URL when set (the
address behind a proxy), else from the request's own scheme and host."""

from __future__ import annotations

from aiohttp import web

from web.kernel.request import runtime

MCP_PATH = "/mcp"
PRM_PATH = "/.well-known/oauth-protected-resource"


def base_url(request: web.Request) -> str:
    configured = runtime(request).settings.public_url
    return configured.rstrip("/") if configured else f"{request.scheme}://{request.host}"


def issuer(request: web.Request) -> str:
    """The authorization server's issuer identifier (RFC 8414 §2): the base URL, no path."""
    return base_url(request)


def mcp_resource(request: web.Request) -> str:
    """The protected resource OAuth tokens are for (RFC 8707 / RFC 9728): the MCP endpoint's URL."""
    return base_url(request) + MCP_PATH


def resource_metadata(request: web.Request, *, for_mcp: bool = True) -> str:
    """The protected resource metadata's URL (RFC 9728 §3.1: the resource's path after the well-known)."""
    return base_url(request) + PRM_PATH + (MCP_PATH if for_mcp else "")
