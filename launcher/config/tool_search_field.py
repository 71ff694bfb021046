"""The agent field `tool_search:` (tools on demand): `auto` (the default), `on`, `off`, or a
number of bytes; the same value as `"tool_search"` in a config's `mcp.json` is the default of
agents that omit the field.

Past the threshold (the in-scope server tools' definitions, in bytes of JSON), a turn offers
the built-ins, a `tool_search` tool and the server tools the model loaded with it, instead of
every schema (toolset/ondemand.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from launcher.errors import ConfigError

FIELD = "tool_search"
DEFAULT_THRESHOLD = 80_000
"""`auto`: bytes of server tool definitions above which tools are offered on demand, about
20 000 tokens (4 bytes a token): a tenth of a 200k context spent before the prompt."""

ToolSearch = int | Literal["off"]
"""A parsed value: the threshold in bytes (`on` is 0), or `off` (every tool offered)."""


def parse_tool_search(value: object, *, path: Path, line: int) -> ToolSearch:
    """The field's value; anything else names the file, line and field."""
    if value is True or (isinstance(value, str) and value.strip().lower() == "on"):
        return 0
    if value is False or (isinstance(value, str) and value.strip().lower() == "off"):
        return "off"
    if isinstance(value, str) and value.strip().lower() == "auto":
        return DEFAULT_THRESHOLD
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise ConfigError(
        f"expected auto, on, off or a number of bytes (0 or more), got '{value}'",
        path=path,
        line=line,
        field=FIELD,
    )


def read_config_default(path: Path) -> ToolSearch | None:
    """The `"tool_search"` entry of a config's `mcp.json`, or None; the file's syntax was
    already checked by the servers' reader."""
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or FIELD not in data:
        return None
    line = next((n for n, ln in enumerate(text.splitlines(), 1) if f'"{FIELD}"' in ln), 1)
    return parse_tool_search(data[FIELD], path=path, line=line)


def threshold(own: ToolSearch | None, default: ToolSearch | None = None) -> int | None:
    """The agent's threshold in bytes: its field, else the config's default, else `auto`;
    None when tools are never offered on demand."""
    value = own if own is not None else default
    if value is None:
        return DEFAULT_THRESHOLD
    return None if value == "off" else int(value)
