"""`subagent agents`: each agent with its source and resolved scope, computed without I/O."""

from __future__ import annotations

from typing import Any

from launcher.config.types import Config
from launcher.toolset.scope import ToolScope


def agent_rows(config: Config) -> list[dict[str, Any]]:
    """One JSON-able row per agent (broken agent files included, with their error)."""
    rows: list[dict[str, Any]] = []
    for spec in config.agents.values():
        scope = ToolScope(spec)
        rows.append(
            {
                "name": spec.name,
                "description": spec.description,
                "source": str(spec.source) if spec.source else None,
                "model": spec.model,
                "builtins": list(scope.builtin_names()),
                "servers": list(scope.servers_to_start(config.servers)),
                "selectors": [s.raw for s in spec.tools or () if s.kind in ("ext", "name")],
                "disallowed_tools": [s.raw for s in spec.disallowed_tools],
                "isolated": spec.isolated,
                "extensions": spec.extensions
                if isinstance(spec.extensions, bool)
                else list(spec.extensions),
                "memory": spec.memory,
                "max_turns": spec.max_turns,
            }
        )
    for name, error in config.broken_agents.items():
        if name not in config.agents:
            rows.append(
                {
                    "name": name,
                    "description": "",
                    "source": broken_source(name, error),
                    "builtins": [],
                    "servers": [],
                    "error": error,
                }
            )
    return rows


def broken_source(name: str, error: str) -> str | None:
    """The file of a broken agent, read from its error text (`PATH[:LINE]: ...`).

    Discovery keys a broken file by its stem, so its path ends in `NAME.md`.
    """
    marker = f"{name}.md"
    end = error.find(marker + ":")
    return error[: end + len(marker)] if end > 0 else None
