"""subagent: scoped LLM sub-agents whose tools come from MCP servers."""

__version__ = "0.1.0"
