"""OAuth 2.1 for MCP clients: discovery, registration, tokens, the consent page and the Bearer challenge."""
