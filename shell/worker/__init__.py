"""The worker: its command, session, process and the MCP server it calls."""
