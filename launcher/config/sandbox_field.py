"""The agent field `sandbox:` (and `--sandbox`): `on`, `off`, `required`, or a mapping
`{mode: ..., network: true, deny_read: [~/.secrets, /srv/keys], write_config: true}`; the
same value as `"sandbox"` in a config's `mcp.json` is the default of agents that omit it."""

from __future__ import annotations

import json
from pathlib import Path

from launcher.config.types import AgentSpec, SandboxMode, SandboxSettings
from launcher.errors import ConfigError

KEYS = ("mode", "network", "deny_read", "write_config")


def parse_mode(value: object) -> SandboxMode | None:
    """`on`/`off`/`required` (YAML's bare on/off arrive as booleans); None if not one."""
    if isinstance(value, bool):
        return SandboxMode.ON if value else SandboxMode.OFF
    if isinstance(value, str) and value.strip().lower() in {m.value for m in SandboxMode}:
        return SandboxMode(value.strip().lower())
    return None


def parse_sandbox(value: object, *, path: Path, line: int) -> SandboxSettings:
    """The field's value as settings; anything unclear is refused (a sandbox fails closed)."""

    def error(message: str) -> ConfigError:
        return ConfigError(message, path=path, line=line, field="sandbox")

    mode = parse_mode(value)
    if mode is not None:
        return SandboxSettings(mode=mode)
    if not isinstance(value, dict):
        raise error(f"expected on, off, required or a mapping, got '{value}'")
    unknown = sorted(str(k) for k in value if k not in KEYS)
    if unknown:
        raise error(f"unknown key '{unknown[0]}' (known: {', '.join(KEYS)})")
    settings = SandboxSettings()
    if "mode" in value:
        mode = parse_mode(value["mode"])
        if mode is None:
            raise error(f"mode: expected on, off or required, got '{value['mode']}'")
        settings = SandboxSettings(mode=mode)
    network = value.get("network", False)
    if not isinstance(network, bool):
        raise error(f"network: expected true or false, got '{network}'")
    deny = value.get("deny_read", [])
    items = [deny] if isinstance(deny, str) else deny
    if not isinstance(items, list) or not all(isinstance(i, str) and i.strip() for i in items):
        raise error("deny_read: expected a list of paths")
    for item in items:
        if not (item.startswith("/") or item == "~" or item.startswith("~/")):
            raise error(f"deny_read: '{item}' must be absolute or start with ~/")
    write_config = value.get("write_config", False)
    if not isinstance(write_config, bool):
        raise error(f"write_config: expected true or false, got '{write_config}'")
    return SandboxSettings(settings.mode, network, tuple(i.strip() for i in items), write_config)


def read_config_default(path: Path) -> SandboxSettings | None:
    """The `"sandbox"` entry of a config's `mcp.json` (the default of agents that omit the
    field), or None; the file's syntax was already checked by the servers' reader."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or "sandbox" not in data:
        return None
    text = path.read_text(encoding="utf-8")
    line = next((n for n, ln in enumerate(text.splitlines(), 1) if '"sandbox"' in ln), 1)
    return parse_sandbox(data["sandbox"], path=path, line=line)


def agent_sandbox(agent: AgentSpec, default: SandboxSettings | None) -> SandboxSettings:
    """An agent's sandbox: its own field, else the config's default, else `on`."""
    return agent.sandbox or default or SandboxSettings()
