"""Configuration: agent files, the server registry, discovery and selectors.

Pure: reads files, never starts a process, never imports mcp, httpx or anyio.
"""

from launcher.config.agents import parse_agent_file, parse_agent_text
from launcher.config.discovery import (
    DEFAULT_AGENT,
    builtin_agents,
    check_ext_names,
    load_config,
    resolve_agent,
)
from launcher.config.selectors import KNOWN_BUILTINS, parse_selectors
from launcher.config.servers import load_servers, parse_servers_text
from launcher.config.shown import masked_launch_spec
from launcher.config.types import (
    BUILTIN_TOOLS,
    MEMORY_TOOLS,
    ORCHESTRATION_TOOLS,
    AgentSpec,
    Config,
    Selector,
    ServerSpec,
)

__all__ = [
    "BUILTIN_TOOLS",
    "DEFAULT_AGENT",
    "KNOWN_BUILTINS",
    "MEMORY_TOOLS",
    "ORCHESTRATION_TOOLS",
    "AgentSpec",
    "Config",
    "Selector",
    "ServerSpec",
    "builtin_agents",
    "check_ext_names",
    "load_config",
    "load_servers",
    "masked_launch_spec",
    "parse_agent_file",
    "parse_agent_text",
    "parse_selectors",
    "parse_servers_text",
    "resolve_agent",
]
