"""The MCP transport's bounds (docs/SECURITY.md: the MCP transport)."""
