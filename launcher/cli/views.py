"""Rows and `--json` shapes of `agents`, `servers` and `tools` (CONTRACT.md), computed once.

The human renderers in `render.py` print these same rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from launcher.config.types import Config
from launcher.toolset.scope import ToolScope

if TYPE_CHECKING:
    from launcher.session import Session


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


def server_rows(config: Config) -> dict[str, dict[str, Any]]:
    """Each configured server's launch spec, with every `${VAR}` secret masked."""
    from launcher.config.servers import masked_launch_spec

    return {name: masked_launch_spec(spec) for name, spec in config.servers.items()}


def tools_report(session: Session) -> dict[str, Any]:
    """The contract's JSON object for `subagent tools --json`, read from a live session."""
    active = [
        {"name": e.name, "server": e.server, "tool": e.tool, "description": e.description}
        for e in session.active()
    ]
    muted = [
        {"name": e.name, "server": e.server, "tool": e.tool, "reason": reason}
        for e, reason in session.muted()
        if e.server is not None
    ]
    servers = {
        name: {"state": st.state, "tools": st.tools, "error": st.error}
        for name, st in session.status().items()
    }
    return {"agent": session.agent.name, "active": active, "muted": muted, "servers": servers}
