"""The `subagent` built-in: delegate a task to one of the agent's `allowed_subagents`.

The tool only checks and forwards; running the child (a worker process whose servers
start at its own session start) is the job of whoever assembled the session, which
hands in a `Delegate`. The child's scope comes from its own agent file.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from launcher.config.types import DELEGATE_TOOL
from launcher.errors import ToolError
from launcher.tools.common import get_str, safe_caller
from launcher.toolset.types import ToolEntry, ToolResult

Delegate = Callable[[str, str], Awaitable[ToolResult]]
"""Runs agent `name` on `prompt` to its end; its answer (is_error unless completed)."""


def delegate_entry(allowed: Sequence[str], delegate: Delegate | None) -> ToolEntry:
    """The `subagent` tool for an agent that may delegate to `allowed`."""
    names = list(allowed)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "agent": {"type": "string", "description": "Which sub-agent to run."},
            "prompt": {"type": "string", "description": "The task, complete and self-contained."},
        },
        "required": ["agent", "prompt"],
        "additionalProperties": False,
    }
    if names:
        schema["properties"]["agent"]["enum"] = names
    listed = ", ".join(names) or "none"
    description = (
        "Delegate a task to a sub-agent and wait for its final answer. "
        f"Sub-agents you may use: {listed}."
    )

    async def call(args: dict[str, Any]) -> ToolResult:
        agent = get_str(args, "agent")
        prompt = get_str(args, "prompt")
        if agent not in names:
            raise ToolError(
                f"agent '{agent}' is not one of this agent's allowed_subagents ({listed})"
            )
        if not prompt.strip():
            raise ToolError("prompt is empty")
        if delegate is None:
            raise ToolError("delegation is not available in this session")
        return await delegate(agent, prompt)

    return ToolEntry(
        DELEGATE_TOOL,
        "builtin",
        DELEGATE_TOOL,
        description,
        schema,
        safe_caller(DELEGATE_TOOL, call),
    )
