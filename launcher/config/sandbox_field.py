"""The agent field `sandbox:` (and `--sandbox`): `on`, `off`, `required`, or a mapping
`{mode: ..., network: true, deny_read: [~/.secrets, /srv/keys]}`."""

from __future__ import annotations

from pathlib import Path

from launcher.config.types import SandboxMode, SandboxSettings
from launcher.errors import ConfigError

KEYS = ("mode", "network", "deny_read")


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
    return SandboxSettings(settings.mode, network, tuple(i.strip() for i in items))
