"""Where discovery looked, for `agents` and `servers` to say so when they found nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from launcher import settings


def searched(config: Any, config_dir: Path | None, kind: str) -> list[str]:
    """The places `kind` ("agents" or "servers") was looked for, in discovery order.

    Discovery may record them itself (`Config.searched`, a dict by kind); otherwise they
    are read from discovery's own tables: `--config-dir` alone, else `./.subagent/`, the
    other hosts' project folders and files, then the user-level ones.
    """
    recorded = getattr(config, "searched", None)
    if isinstance(recorded, dict) and recorded.get(kind):
        return [str(p) for p in recorded[kind]]
    from launcher.config.discovery import PROJECT_AGENT_DIRS, USER_AGENT_DIRS
    from launcher.config.hosts import PROJECT_HOST_FILES

    if config_dir is None and (named := settings.CONFIG_DIR.text()):
        config_dir = Path(named)
    if config_dir is not None:
        return [f"{config_dir}/{'agents/' if kind == 'agents' else 'mcp.json'}"]
    if kind == "agents":
        return [
            "./.subagent/agents/",
            *(f"./{folder}/" for folder, _ in PROJECT_AGENT_DIRS),
            *(f"~/{folder}/" for folder, _ in USER_AGENT_DIRS),
        ]
    return [
        "./.subagent/mcp.json",
        *(f"./{name}" for name, _ in PROJECT_HOST_FILES),
        "~/.config/subagent/mcp.json",
    ]


def nothing_found(config: Any, config_dir: Path | None, kind: str) -> str:
    """The line `agents`/`servers` print when discovery found none of `kind`."""
    where = ", ".join(searched(config, config_dir, kind))
    what = "no agent files found" if kind == "agents" else "no MCP servers configured"
    hint = " (`subagent init` writes an example)"
    return f"{what}; looked in {where}{hint}"
