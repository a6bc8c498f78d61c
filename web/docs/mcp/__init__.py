"""MCP server of the document API: streamable HTTP at /mcp, discovery at /.well-known/mcp.json."""

from web.docs.mcp.transport import add_routes

__all__ = ["add_routes"]
