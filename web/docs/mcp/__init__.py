"""MCP server of the document API: streamable HTTP at /mcp and discovery (transport.py)."""
