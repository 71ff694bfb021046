"""One server entry of another host's config, in our `mcp.json` terms: a table per host.

Each host's fields are read (mapped onto ours), ignored with a warning naming them, or
make the server be skipped when we cannot honour them and leaving them out would start
something the host would not. Formats as each host documents them: Codex's
`[mcp_servers.NAME]`, Gemini CLI's `mcpServers` with `mcp.allowed`/`mcp.excluded`,
opencode's `mcp` with `{env:VAR}`, and Claude Code's and Cursor's `mcpServers`.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from launcher.config.dialect import looks_like_restriction
from launcher.errors import ConfigError

Entry = Callable[[str, dict[str, Any], "Reading"], dict[str, Any] | None]
"""A host's server entry -> an `mcp.json` entry, or None (left out)."""


@dataclass(frozen=True)
class Reading:
    """What an entry function may use: the environment and the file's warnings."""

    env: Mapping[str, str]
    warnings: list[str]
    where: str
    strict: bool = False
    """An agent file's own servers: a field that looks like a tool filter but is not
    read (`disabled-tools`, `exclude_tools`) refuses, since ignoring it would widen."""

    def skip(self, name: str, why: str) -> None:
        """Leave the server out, saying why."""
        self.warnings.append(f"{self.where}: server '{name}': {why}; skipped")

    def ignore(self, name: str, raw: dict[str, Any], read: frozenset[str]) -> None:
        """Name every field of the entry that is not read here (strict: refuse one that
        looks like a restriction)."""
        for field in sorted(set(raw) - read):
            like = looks_like_restriction(str(field)) if self.strict else None
            if like is not None:
                raise EntryError(
                    str(field),
                    f"looks like a restriction ('{like}') that this host's server entries "
                    "do not have: refused, since without it the server would offer more",
                )
            self.warnings.append(
                f"{self.where}: server '{name}': field '{field}' is not supported here; ignored"
            )


class EntryError(ValueError):
    """A malformed field of a host's entry: its name (under the server) and what is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def strings(value: object, change: Callable[[str], str]) -> object:
    """A copy of a JSON-like value with `change` applied to every string in it."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {k: strings(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [strings(v, change) for v in value]
    return value


def _enabled(raw: dict[str, Any]) -> bool:
    value = raw.get("enabled", True)
    if not isinstance(value, bool):
        # `enabled = "false"` must not count as enabled (a string is truthy).
        raise EntryError("enabled", f"expected true or false, got {json.dumps(value)}")
    return value


def mcp_json_entry(name: str, raw: dict[str, Any], reading: Reading) -> dict[str, Any] | None:
    """Claude Code's and Cursor's entries are ours, bar the transports we do not speak."""
    kind = raw.get("type")
    if kind in ("sse", "ws"):
        reading.skip(name, f"the {kind} transport is not supported")
        return None
    return raw


_CODEX_COPIED = ("command", "args", "env", "cwd", "url", "required")
_CODEX_RENAMED = {
    "startup_timeout_sec": "startup_timeout",
    "tool_timeout_sec": "tool_timeout",
    "enabled_tools": "enabled_tools",
    "disabled_tools": "disabled_tools",
}
_CODEX_READ = frozenset(
    {*_CODEX_COPIED, *_CODEX_RENAMED, "enabled", "env_vars", "startup_timeout_ms"}
    | {"http_headers", "env_http_headers", "bearer_token_env_var", "bearer_token"}
)


def codex_entry(name: str, raw: dict[str, Any], reading: Reading) -> dict[str, Any] | None:
    """Codex's `[mcp_servers.NAME]`: timeouts in seconds, tool lists, `required`, `enabled`;
    `env_vars` and `env_http_headers` name variables of the environment, forwarded as
    `${VAR}` (so masked like ours) when set, left out when not (as Codex does)."""
    if not _enabled(raw):
        return None
    if "bearer_token" in raw:
        reading.skip(name, "'bearer_token' (a token written in the file) is refused by Codex too")
        return None
    reading.ignore(name, raw, _CODEX_READ)
    entry = {k: raw[k] for k in _CODEX_COPIED if k in raw}
    entry |= {ours: raw[theirs] for theirs, ours in _CODEX_RENAMED.items() if theirs in raw}
    if "startup_timeout_ms" in raw and "startup_timeout_sec" not in raw:
        entry["startup_timeout"] = _number(raw, "startup_timeout_ms") / 1000
    forwarded = {v: f"${{{v}}}" for v in _env_var_names(raw) if v in reading.env}
    if forwarded and isinstance(raw.get("env", {}), dict):
        entry["env"] = {**forwarded, **raw.get("env", {})}  # a literal `env` wins, as in Codex
    if "url" in raw:
        entry["type"] = "http"
        headers = _string_map(raw, "http_headers")
        for header, variable in _string_map(raw, "env_http_headers").items():
            if reading.env.get(variable, "").strip():
                headers[header] = f"${{{variable}}}"
            else:
                reading.warnings.append(
                    f"{reading.where}: server '{name}': header '{header}' is not sent: "
                    f"{variable} is not set"
                )
        if isinstance(raw.get("bearer_token_env_var"), str):
            headers["Authorization"] = f"Bearer ${{{raw['bearer_token_env_var']}}}"
        if headers:
            entry["headers"] = headers
    return entry


def _env_var_names(raw: dict[str, Any]) -> list[str]:
    value = raw.get("env_vars", [])
    names = (
        [item.get("name") if isinstance(item, dict) else item for item in value]
        if isinstance(value, list)
        else None
    )
    if names is None or not all(isinstance(n, str) and n for n in names):
        raise EntryError("env_vars", "expected a list of variable names")
    return names  # type: ignore[return-value]


def _string_map(raw: dict[str, Any], key: str) -> dict[str, str]:
    value = raw.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise EntryError(key, "expected an object of string values")
    return dict(value)


def _number(raw: dict[str, Any], key: str) -> float:
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise EntryError(key, f"expected a positive number, got {json.dumps(value)}")
    return float(value)


_GEMINI_READ = frozenset(
    {"command", "args", "env", "cwd", "headers", "httpUrl", "url", "timeout"}
    | {"includeTools", "excludeTools", "description", "trust"}
)
"""`trust` only skips Gemini's confirmation prompts; a sub-agent has none to skip."""


def gemini_entry(name: str, raw: dict[str, Any], reading: Reading) -> dict[str, Any] | None:
    """Gemini CLI: `httpUrl` is streamable HTTP, `url` is SSE; `timeout` in milliseconds."""
    entry = {k: v for k, v in raw.items() if k in ("command", "args", "env", "cwd", "headers")}
    if "httpUrl" in raw:
        entry.update(type="http", url=raw["httpUrl"])
    elif "url" in raw:
        reading.skip(name, "the SSE transport (url) is not supported")
        return None
    reading.ignore(name, raw, _GEMINI_READ)
    if isinstance(raw.get("timeout"), int | float) and raw["timeout"] > 0:
        entry["tool_timeout"] = raw["timeout"] / 1000
    if "includeTools" in raw:
        entry["enabled_tools"] = raw["includeTools"]
    if "excludeTools" in raw:
        entry["disabled_tools"] = raw["excludeTools"]
    return entry


def gemini_filter(data: dict[str, Any], path: Path) -> Callable[[str], bool]:
    """Gemini's `mcp.allowed` / `mcp.excluded` (and their older top-level names
    `allowMCPServers` / `excludeMCPServers`): names or `*`/`?` globs; excluded wins."""
    mcp = data.get("mcp", {})
    if not isinstance(mcp, dict):
        raise ConfigError("expected an object", path=path, field="mcp")
    allowed = _names(mcp, "allowed", path, data, "allowMCPServers")
    excluded = _names(mcp, "excluded", path, data, "excludeMCPServers") or []

    def matches(name: str, patterns: list[str]) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in patterns)

    return lambda name: (allowed is None or matches(name, allowed)) and not matches(name, excluded)


def _names(
    mcp: dict[str, Any], key: str, path: Path, data: dict[str, Any], old: str
) -> list[str] | None:
    field, value = (f"mcp.{key}", mcp[key]) if key in mcp else (old, data.get(old))
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError("expected a list of server names", path=path, field=field)
    # Only `*` and `?` are Gemini's globs: any other character matches itself.
    return [re.sub(r"([\[\]])", r"[\1]", v) for v in value]


_OPENCODE_READ = frozenset(
    {"type", "command", "environment", "enabled", "timeout", "url", "headers"}
)
_OPENCODE_ENV = re.compile(r"\{env:([^}]+)\}")


def opencode_entry(name: str, raw: dict[str, Any], reading: Reading) -> dict[str, Any] | None:
    """opencode's `mcp`: `local` (command as one list) or `remote` (url), `enabled`,
    `timeout` (ms); `{env:VAR}` is the variable's value, empty when unset (as in opencode)."""
    if not _enabled(raw):
        return None
    if "{file:" in json.dumps(raw):
        reading.skip(name, "'{file:...}' (a value read from a file) is not supported")
        return None
    reading.ignore(name, raw, _OPENCODE_READ)
    raw = strings(raw, lambda s: _OPENCODE_ENV.sub(r"${\1:-}", s))  # type: ignore[assignment]
    kind = raw.get("type", "local")
    if kind == "remote":
        entry = {"type": "http", "url": raw.get("url"), "headers": raw.get("headers", {})}
    elif kind == "local":
        command = raw.get("command")
        if not isinstance(command, list) or not command:
            raise EntryError("command", "expected a non-empty list (the program and its arguments)")
        entry = {"command": command[0], "args": command[1:]}
        if "environment" in raw:
            entry["env"] = raw["environment"]
    else:
        raise EntryError("type", f"expected 'local' or 'remote', got {json.dumps(kind)}")
    if isinstance(raw.get("timeout"), int | float) and raw["timeout"] > 0:
        entry["startup_timeout"] = raw["timeout"] / 1000
    return entry
