"""The MCP server for AI assistants: JSON-RPC over stdio (:mod:`~palazzo.hosts.mcp.server`)."""
