"""The tool-surface lock (`subagent.lock.json`): its data, its file, and the run-time check.

A leaf like the rest of config, so the session (which enforces a lock) and the serve
worker may use it; `launcher/check/pins.py` pins live sessions and diffs pins.
Built-in tools are never locked: only server tools are pinned and checked.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from launcher.errors import ConfigError

LOCK_FILE = "subagent.lock.json"
"""The lock's file name, in the config directory (see `lock_path`)."""
LOCK_VERSION = 1
"""The lock file format; a file with another version is a config error."""

NOT_IN_LOCK = "not in lock"
CHANGED_SINCE_LOCK = "changed since lock"
LOCK_REASONS = (NOT_IN_LOCK, CHANGED_SINCE_LOCK)
"""The muted reasons a lock gives (CONTRACT.md)."""


class PinnableTool(Protocol):
    """What a pin reads of a registered tool (toolset's ToolEntry has it; config sits below
    toolset, so it names the shape rather than importing the class)."""

    @property
    def name(self) -> str: ...
    @property
    def server(self) -> str | None: ...
    @property
    def tool(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def input_schema(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class ToolPin:
    """One pinned server tool: exposed name, origin, and hashes of what the model reads."""

    name: str
    server: str
    tool: str
    description_sha256: str
    schema_sha256: str


@dataclass(frozen=True)
class ServerPin:
    """A server's own `serverInfo` at lock time (informational: not enforced)."""

    name: str | None
    version: str | None


@dataclass
class AgentPin:
    """One agent's pinned surface: tools by exposed name, servers by configured name."""

    tools: dict[str, ToolPin] = field(default_factory=dict)
    servers: dict[str, ServerPin] = field(default_factory=dict)
    withheld: dict[str, int] = field(default_factory=dict, compare=False)
    """Server -> how many of its tools were left out of the pin because a secret is in
    what a pin reads of them (never written to the file)."""


@dataclass
class Lock:
    """The whole lock file: one pin per locked agent."""

    agents: dict[str, AgentPin] = field(default_factory=dict)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def schema_hash(schema: Any) -> str:
    """The hash of a schema's canonical JSON (sorted keys, no spaces)."""
    canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha256_text(canonical)


def pin_entry(entry: PinnableTool) -> ToolPin:
    """The pin of a server tool as registered now."""
    if entry.server is None:
        raise ValueError(f"built-in tool {entry.name!r} is not locked")
    return ToolPin(
        name=entry.name,
        server=entry.server,
        tool=entry.tool,
        description_sha256=sha256_text(entry.description),
        schema_sha256=schema_hash(entry.input_schema),
    )


def lock_reason(pin: AgentPin, entry: PinnableTool) -> str | None:
    """The run-time check: None if `entry` matches the agent's pin (or is built-in)."""
    if entry.server is None:
        return None
    pinned = pin.tools.get(entry.name)
    if pinned is None or (pinned.server, pinned.tool) != (entry.server, entry.tool):
        return NOT_IN_LOCK
    now = pin_entry(entry)
    if (now.description_sha256, now.schema_sha256) != (
        pinned.description_sha256,
        pinned.schema_sha256,
    ):
        return CHANGED_SINCE_LOCK
    return None


def lock_path(config_dir: Path | None, *, cwd: Path, home: Path) -> Path:
    """Where the lock lives: in `--config-dir`; else the first of `./.subagent/` and
    `~/.config/subagent/` that exists; else `./.subagent/` (created by `subagent lock`)."""
    if config_dir is not None:
        return (cwd / config_dir.expanduser()) / LOCK_FILE
    for directory in (cwd / ".subagent", home / ".config" / "subagent"):
        if directory.is_dir():
            return directory / LOCK_FILE
    return cwd / ".subagent" / LOCK_FILE


# ---- the file ---------------------------------------------------------------------------


def load_lock(path: Path) -> Lock | None:
    """The lock at `path`, or None if there is none; ConfigError naming the field if bad."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read lock: {exc.strerror}", path=path) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not valid JSON: {exc.msg}", path=path, line=exc.lineno) from exc
    reader = _Reader(path)
    top = reader.obj(data, "")
    if top.get("version") != LOCK_VERSION:
        raise reader.error("version", f"expected {LOCK_VERSION}, got {top.get('version')!r}")
    agents = reader.obj(top.get("agents", {}), "agents")
    return Lock({name: reader.agent(body, f"agents.{name}") for name, body in agents.items()})


def write_lock(path: Path, lock: Lock) -> None:
    """Write `lock` atomically (temp file + rename) as stable, sorted JSON."""
    body = json.dumps(lock_to_dict(lock), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{LOCK_FILE}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(body)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def lock_to_dict(lock: Lock) -> dict[str, Any]:
    """The file's JSON form: tools keyed by exposed name (the name is not repeated)."""
    agents: dict[str, Any] = {}
    for name, pin in lock.agents.items():
        agents[name] = {
            "servers": {s: {"name": p.name, "version": p.version} for s, p in pin.servers.items()},
            "tools": {
                t: {
                    "server": p.server,
                    "tool": p.tool,
                    "description_sha256": p.description_sha256,
                    "schema_sha256": p.schema_sha256,
                }
                for t, p in pin.tools.items()
            },
        }
    return {"version": LOCK_VERSION, "agents": agents}


class _Reader:
    """Reads the parsed JSON, raising ConfigError with the dotted field of any bad value."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def error(self, where: str, message: str) -> ConfigError:
        return ConfigError(message, path=self.path, field=where or None)

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(where, f"expected an object, got {type(value).__name__}")
        return value

    def text(self, value: Any, where: str, *, optional: bool = False) -> str | None:
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise self.error(where, f"expected a string, got {type(value).__name__}")
        return value

    def agent(self, value: Any, where: str) -> AgentPin:
        body = self.obj(value, where)
        tools: dict[str, ToolPin] = {}
        for name, raw in self.obj(body.get("tools", {}), f"{where}.tools").items():
            at = f"{where}.tools.{name}"
            item = self.obj(raw, at)
            fields = ("server", "tool", "description_sha256", "schema_sha256")
            values = [self.text(item.get(key), f"{at}.{key}") or "" for key in fields]
            tools[name] = ToolPin(name, *values)
        servers: dict[str, ServerPin] = {}
        for name, raw in self.obj(body.get("servers", {}), f"{where}.servers").items():
            at = f"{where}.servers.{name}"
            item = self.obj(raw, at)
            servers[name] = ServerPin(
                self.text(item.get("name"), f"{at}.name", optional=True),
                self.text(item.get("version"), f"{at}.version", optional=True),
            )
        return AgentPin(tools, servers)
