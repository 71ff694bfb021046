"""MCP Tasks for serve: the era-neutral store, one module per protocol version, and the wiring."""
