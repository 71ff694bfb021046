"""Where discovery looked, for `agents` and `servers` to say so when they found nothing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from launcher.config.discovery import CONFIG_DIR_ENV


def searched(config: Any, config_dir: Path | None, kind: str) -> list[str]:
    """The places `kind` ("agents" or "servers") was looked for, in discovery order.

    Discovery may record them itself (`Config.searched`, a dict by kind); otherwise they
    are today's order: `--config-dir` alone, else `./.subagent/`, `./.mcp.json` (servers),
    `~/.config/subagent/`.
    """
    recorded = getattr(config, "searched", None)
    if isinstance(recorded, dict) and recorded.get(kind):
        return [str(p) for p in recorded[kind]]
    if config_dir is None and os.environ.get(CONFIG_DIR_ENV):
        config_dir = Path(os.environ[CONFIG_DIR_ENV])
    leaf = "agents/" if kind == "agents" else "mcp.json"
    if config_dir is not None:
        return [f"{config_dir}/{leaf}"]
    places = [f"./.subagent/{leaf}"]
    if kind == "servers":
        places.append("./.mcp.json")
    places.append(f"~/.config/subagent/{leaf}")
    return places


def nothing_found(config: Any, config_dir: Path | None, kind: str) -> str:
    """The line `agents`/`servers` print when discovery found none of `kind`."""
    where = ", ".join(searched(config, config_dir, kind))
    what = "no agent files found" if kind == "agents" else "no MCP servers configured"
    hint = " (`subagent init` writes an example)"
    return f"{what}; looked in {where}{hint}"
