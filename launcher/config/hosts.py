"""Other hosts' MCP server configs, read into ServerSpecs like `mcp.json`.

Project files (`.mcp.json`, `.vscode/mcp.json`, `.cursor/mcp.json`) are read by
discovery. User-level files are read only when asked (`--servers-from HOST,...`,
`SUBAGENT_SERVERS_FROM`, or `"servers_from"` in our `mcp.json`): a general-purpose
agent with no `ext:` starts every allowed server. Each host is a row of `HOSTS`: its
file, its format, and a function turning one of its entries into an `mcp.json` entry.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from launcher.config.servers import parse_json, parse_servers_data
from launcher.config.types import ServerSpec
from launcher.errors import ConfigError, UsageError

SERVERS_FROM_ENV = "SUBAGENT_SERVERS_FROM"
"""Comma-separated hosts whose user-level servers to read (`--servers-from` sets it)."""

PROJECT_HOST_FILES: tuple[tuple[str, str], ...] = (
    (".mcp.json", "mcpServers"),
    (".vscode/mcp.json", "servers"),
    (".cursor/mcp.json", "mcpServers"),
)
"""Project files of other hosts (path, key of its servers), read after `./.subagent/`."""

_INPUT = re.compile(r"\$\{input:([^}]*)\}")
_VSCODE_VARS = (("${workspaceFolder}", "."), ("${env:", "${"))

Entry = Callable[[str, dict, list[str]], dict | None]
"""A host's server entry -> an `mcp.json` entry, or None (skipped, with a warning)."""


@dataclass(frozen=True)
class Host:
    """A host's user-level config file: where it is, its format, where servers are."""

    file: str
    format: str  # json or toml
    key: str
    entry: Entry


def _as_is(name: str, raw: dict, warnings: list[str]) -> dict | None:
    return raw


def _codex(name: str, raw: dict, warnings: list[str]) -> dict | None:
    """Codex's `[mcp_servers.NAME]`: timeouts in seconds, tool lists, `enabled`."""
    if raw.get("enabled") is False:
        return None
    entry = {k: v for k, v in raw.items() if k in ("command", "args", "env", "cwd", "url")}
    if "url" in entry:
        entry["type"] = "http"
        if isinstance(raw.get("bearer_token_env_var"), str):
            entry["headers"] = {"Authorization": f"Bearer ${{{raw['bearer_token_env_var']}}}"}
        if isinstance(raw.get("http_headers"), dict):
            entry["headers"] = {**raw["http_headers"], **entry.get("headers", {})}
    for theirs, ours in (
        ("startup_timeout_sec", "startup_timeout"),
        ("tool_timeout_sec", "tool_timeout"),
    ):
        if theirs in raw:
            entry[ours] = raw[theirs]
    for theirs, ours in (("enabled_tools", "enabled_tools"), ("disabled_tools", "disabled_tools")):
        if theirs in raw:
            entry[ours] = raw[theirs]
    return entry


def _gemini(name: str, raw: dict, warnings: list[str]) -> dict | None:
    """Gemini CLI: `httpUrl` is streamable HTTP, `url` is SSE; `timeout` in milliseconds."""
    entry = {k: v for k, v in raw.items() if k in ("command", "args", "env", "cwd", "headers")}
    if "httpUrl" in raw:
        entry.update(type="http", url=raw["httpUrl"])
    elif "url" in raw:
        warnings.append(f"server '{name}': the SSE transport (url) is not supported; skipped")
        return None
    if isinstance(raw.get("timeout"), int | float) and raw["timeout"] > 0:
        entry["tool_timeout"] = raw["timeout"] / 1000
    if "includeTools" in raw:
        entry["enabled_tools"] = raw["includeTools"]
    if "excludeTools" in raw:
        entry["disabled_tools"] = raw["excludeTools"]
    return entry


def _opencode(name: str, raw: dict, warnings: list[str]) -> dict | None:
    """opencode's `mcp`: `local` (command as one list) or `remote` (url), `enabled`."""
    if raw.get("enabled") is False:
        return None
    if raw.get("type") == "remote":
        return {"type": "http", "url": raw.get("url"), "headers": raw.get("headers", {})}
    command = raw.get("command")
    if not isinstance(command, list) or not command:
        raise ValueError("'command' must be a non-empty list (the program and its arguments)")
    entry: dict = {"command": command[0], "args": command[1:]}
    if "environment" in raw:
        entry["env"] = raw["environment"]
    if isinstance(raw.get("timeout"), int | float) and raw["timeout"] > 0:
        entry["startup_timeout"] = raw["timeout"] / 1000
    return entry


HOSTS: Mapping[str, Host] = {
    "claude": Host(".claude.json", "json", "mcpServers", _as_is),
    "codex": Host(".codex/config.toml", "toml", "mcp_servers", _codex),
    "gemini": Host(".gemini/settings.json", "json", "mcpServers", _gemini),
    "opencode": Host(".config/opencode/opencode.json", "json", "mcp", _opencode),
    "cursor": Host(".cursor/mcp.json", "json", "mcpServers", _as_is),
}
"""Hosts `--servers-from` knows, with their user-level file under HOME."""


def servers_from(env: Mapping[str, str], more: Sequence[str] = ()) -> list[str]:
    """The hosts asked for (environment, then config files), each once; UsageError if unknown."""
    asked = [h.strip() for h in env.get(SERVERS_FROM_ENV, "").split(",") if h.strip()]
    hosts = list(dict.fromkeys([*asked, *more]))
    for host in hosts:
        if host not in HOSTS:
            raise UsageError(
                f"unknown host '{host}'; known: {', '.join(HOSTS)}", field="--servers-from"
            )
    return hosts


def add_host_servers(
    servers: MutableMapping[str, ServerSpec],
    warnings: list[str],
    host: str,
    home: Path,
    env: Mapping[str, str],
) -> None:
    """Add `host`'s user-level servers to `servers` (first definition of a name wins)."""
    spec = HOSTS[host]
    path = home / spec.file
    if not path.is_file():
        warnings.append(f"--servers-from {host}: {path} not found")
        return
    for name, server in read_host_file(path, spec, env, warnings).items():
        servers.setdefault(name, server)


def read_host_file(
    path: Path, host: Host, env: Mapping[str, str], warnings: list[str]
) -> dict[str, ServerSpec]:
    """One host file's servers; ConfigError naming the file, line and field if malformed."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read server file: {exc}", path=path) from exc
    data = _toml(text, path) if host.format == "toml" else parse_json(text, path)
    if not isinstance(data, dict) or not isinstance(data.get(host.key, {}), dict):
        raise ConfigError("expected an object of servers by name", path=path, field=host.key)
    entries: dict[str, object] = {}
    for name, raw in data.get(host.key, {}).items():
        if not isinstance(raw, dict):
            raise ConfigError("expected an object", path=path, field=f"{host.key}.{name}")
        try:
            entry = host.entry(name, raw, warnings)
        except ValueError as exc:
            raise ConfigError(str(exc), path=path, field=f"{host.key}.{name}") from exc
        if entry is not None:
            entries[name] = entry
    try:
        found, notes, _ = parse_servers_data({host.key: entries}, text, path, env, key=host.key)
    except ConfigError as exc:
        if exc.line is None and host.format == "toml" and exc.field:
            exc.line = _toml_line(text, host.key, exc.field.split(".")[0])
            raise ConfigError(exc.message, path=path, line=exc.line, field=exc.field) from exc
        raise
    warnings.extend(notes)
    return found


def load_project_file(
    path: Path, key: str, env: Mapping[str, str]
) -> tuple[dict[str, ServerSpec], list[str]]:
    """A project file of another host (`.mcp.json`, `.vscode/mcp.json`, `.cursor/mcp.json`):
    a server we cannot run is skipped with a warning, a malformed file is an error."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read server file: {exc}", path=path) from exc
    if key == "servers":
        vscode_inputs(text, path)
        text = vscode_text(text, path.parent.parent)
    data = parse_json(text, path)
    if isinstance(data, dict) and key != "mcpServers":
        # Theirs, not ours: other top-level keys (`inputs`) are none of our business.
        data = {key: data.get(key)}
    servers, warnings, _ = parse_servers_data(data, text, path, env, lenient=True, key=key)
    return servers, warnings


def _toml_line(text: str, table: str, name: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().replace('"', "").startswith(f"[{table}.{name}"):
            return number
    return None


def vscode_inputs(text: str, path: Path) -> None:
    """VS Code's `${input:NAME}` prompts the user for a value: there is no one to ask."""
    match = _INPUT.search(text)
    if match is not None:
        raise ConfigError(
            f"'${{input:{match.group(1)}}}' (a value VS Code asks the user for) is not "
            "supported: use ${VAR} and set VAR in the environment",
            path=path,
            line=text.count("\n", 0, match.start()) + 1,
            field=f"input:{match.group(1)}",
        )


def vscode_text(text: str, project: Path) -> str:
    """VS Code's own variables in our terms: `${workspaceFolder}` and `${env:VAR}`."""
    for theirs, ours in _VSCODE_VARS:
        text = text.replace(theirs, str(project) if ours == "." else ours)
    return text


def _toml(text: str, path: Path) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        line = int(found.group(1)) if found else max(1, len(text.splitlines()))  # at the end
        raise ConfigError(f"invalid TOML: {exc}", path=path, line=line) from exc
