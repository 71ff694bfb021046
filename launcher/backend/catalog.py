"""serve's tools and identity as plain JSON data: what `tools/list` and `initialize` say.

SDK-free on purpose: the early face (early.py) answers from this before the SDK has
loaded, and the SDK server (server.py) builds its answers from the same data, so the
two cannot drift (tests/test_backend_early_equal.py holds them equal per version).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

SERVER_NAME = "subagent"
SERVER_VERSION = "0.1.0"
INSTRUCTIONS = "Spawn scoped sub-agents whose tools come from MCP servers."

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Protocol versions of the initialize handshake, oldest first (the SDK's list, held equal
to `mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS` by a test)."""
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]
TASKS_SINCE = "2025-11-25"
"""The first handshake version with MCP Tasks: older clients are offered none of it."""
AGENT_LINE_CHARS = 100
"""An agent's description is cut to this in `agent`'s description (a host shows it whole)."""


def negotiate(requested: Any) -> str:
    """The version serve answers `initialize` with (the SDK's rule: the client's if known,
    else the latest handshake version)."""
    return requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE


def has_tasks(version: str) -> bool:
    """Whether a handshake-era client of `version` is offered MCP Tasks."""
    return version in HANDSHAKE_VERSIONS and HANDSHAKE_VERSIONS.index(
        version
    ) >= HANDSHAKE_VERSIONS.index(TASKS_SINCE)


TASKS_CAPABILITY: dict[str, Any] = {
    "cancel": {},
    "list": {},
    "requests": {"tools": {"call": {}}},
}
"""The 2025-11-25 `tasks` server capability: list, cancel, task-augmented tools/call."""


def tasks_capability() -> dict[str, Any]:
    """A copy of TASKS_CAPABILITY (wire form), for one answer to own."""
    return copy.deepcopy(TASKS_CAPABILITY)


def capabilities(version: str) -> dict[str, Any]:
    """The server capabilities `initialize` announces to a client of `version`."""
    out: dict[str, Any] = {"tools": {"listChanged": False}}
    if has_tasks(version):
        out["tasks"] = tasks_capability()
    return out


def initialize_result(version: str) -> dict[str, Any]:
    """The `initialize` result for a negotiated handshake `version` (wire form)."""
    return {
        "capabilities": capabilities(version),
        "instructions": INSTRUCTIONS,
        "protocolVersion": version,
        "serverInfo": {"name": SERVER_NAME, "version": SERVER_VERSION},
    }


TASK_TOOLS = frozenset({"spawn_subagent"})
"""Tools that declare `execution.taskSupport` where Tasks are offered."""


def agents_of(config: Any) -> list[tuple[str, str]]:
    """(name, description) of every agent a loaded config can run: what `agent` lists."""
    return [(a.name, a.description) for a in config.agents.values()]


def _agent_property(agents: Iterable[tuple[str, str]]) -> dict[str, Any]:
    known = sorted(agents)
    lines = [f"{name}: {' '.join(desc.split())[:AGENT_LINE_CHARS]}" for name, desc in known]
    return {
        "type": "string",
        "default": "general-purpose",
        "enum": [name for name, _ in known],
        "description": "The agent to run (its scope and prompt); one of:\n" + "\n".join(lines),
    }


def _spawn_tool(agents: Iterable[tuple[str, str]]) -> dict[str, Any]:
    return {
        "name": "spawn_subagent",
        "description": (
            "Run a scoped sub-agent on a task. Foreground (default) waits and returns its final "
            "answer; background returns an agent_id at once (poll get_subagent_result). "
            "Hosts with MCP Tasks may call it as a task (the task id is the agent_id)."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "prompt": {"type": "string", "description": "The task for the sub-agent."},
                "agent": _agent_property(agents),
                "ext": {
                    "type": "array",
                    "items": {"type": "string"},
                    "default": [],
                    "description": "MCP servers to select, as a list of names (each adds "
                    'ext:NAME), e.g. ["mcp-github"].',
                },
                "model": {
                    "type": "string",
                    "description": "PROVIDER:MODEL (e.g. anthropic:claude-sonnet-4-5); "
                    "default: the agent's, else serve's --model. scripted:PATH only for a "
                    "file in serve's config dir or workspace.",
                },
                "background": {
                    "type": "boolean",
                    "default": False,
                    "description": "Return an agent_id at once instead of waiting for the end.",
                },
                "max_turns": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Turn limit (at least 1); default: the agent's.",
                },
                "max_tokens": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Tokens billed over the run, nested sub-agents included; "
                    "never above the agent's.",
                },
                "max_cost_usd": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "description": "USD over the run, nested sub-agents included; never above "
                    "the agent's. A model with no known price refuses to start.",
                },
                "timeout": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "description": "Wall-clock seconds from the session's start (status timeout).",
                },
                "idle_timeout": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "description": "Seconds with no progress (default 600; status idle_timeout).",
                },
                "resume": {
                    "type": "string",
                    "description": (
                        "Continue a session this serve started (its session_id, or `last`) "
                        "with prompt as the follow-up; the agent is the stored one."
                    ),
                },
            },
            "required": ["prompt"],
            "additionalProperties": False,
        },
    }


_AGENT_ID = {"type": "string", "description": "The agent_id spawn_subagent returned."}
_OTHER_TOOLS: list[dict[str, Any]] = [
    {
        "name": "get_subagent_result",
        "description": "The status and result so far of a sub-agent; wait=true waits for its end.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "agent_id": _AGENT_ID,
                "wait": {
                    "type": "boolean",
                    "default": False,
                    "description": "Wait for the sub-agent's end before answering.",
                },
            },
            "required": ["agent_id"],
            "additionalProperties": False,
        },
    },
    {
        "name": "steer_subagent",
        "description": "Send a running sub-agent a message, delivered at its next turn boundary.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "agent_id": _AGENT_ID,
                "message": {"type": "string", "description": "What to tell the sub-agent."},
            },
            "required": ["agent_id", "message"],
            "additionalProperties": False,
        },
    },
    {
        "name": "stop_subagent",
        "description": "Stop a sub-agent; returns its final status once its processes are gone.",
        "inputSchema": {
            "type": "object",
            "properties": {"agent_id": _AGENT_ID},
            "required": ["agent_id"],
            "additionalProperties": False,
        },
    },
    {
        "name": "list_agents",
        "description": "The agents a sub-agent can be spawned as, with their descriptions.",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
    },
]


def tools(agents: Iterable[tuple[str, str]], *, task_support: bool) -> list[dict[str, Any]]:
    """serve's tools in wire form; `agents` are (name, description) pairs from the config,
    `task_support` whether this client is offered Tasks (`execution.taskSupport`)."""
    out = [_spawn_tool(agents), *copy.deepcopy(_OTHER_TOOLS)]
    if task_support:
        for tool in out:
            if tool["name"] in TASK_TOOLS:
                tool["execution"] = {"taskSupport": "optional"}
    return out


def tool_schema(name: str) -> dict[str, Any] | None:
    """The input schema of tool `name` (for argument checks; `agent`'s enum left out: the
    agent is checked against the config of the moment)."""
    for tool in tools((), task_support=False):
        if tool["name"] == name:
            schema: dict[str, Any] = tool["inputSchema"]
            schema["properties"].get("agent", {}).pop("enum", None)
            return schema
    return None
