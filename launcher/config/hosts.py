"""Other hosts' MCP server configs, read into ServerSpecs like `mcp.json`.

Project files (`.mcp.json`, `.vscode/mcp.json`, `.cursor/mcp.json`) are read by
discovery. User-level files are read only when asked (`--servers-from HOST,...`,
`SUBAGENT_SERVERS_FROM`, or `"servers_from"` in our `mcp.json`): a general-purpose
agent with no `ext:` starts every allowed server. Each host is a row of `HOSTS`: its
file, its format, a function turning one of its entries into an `mcp.json` entry
(host_entries.py), and which of its servers it lets run at all (Gemini's `mcp.allowed`).

Every entry then goes through our own parser: a value taken from the environment is a
secret and a credential written as text is masked (credentials.py). A server that cannot
run here (SSE, an unset variable) is skipped with a warning naming it; a malformed file
or entry is exit 2 naming the file, line and field.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from launcher import settings
from launcher.config.host_entries import (
    Entry,
    EntryError,
    Reading,
    codex_entry,
    gemini_entry,
    gemini_filter,
    mcp_json_entry,
    opencode_entry,
    strings,
)
from launcher.config.servers import parse_json, parse_servers_data
from launcher.config.types import ServerSpec
from launcher.errors import ConfigError, ExpansionError, UsageError

"""Comma-separated hosts whose user-level servers to read (`--servers-from` sets it)."""

PROJECT_HOST_FILES: tuple[tuple[str, str], ...] = (
    (".mcp.json", "mcpServers"),
    (".vscode/mcp.json", "servers"),
    (".cursor/mcp.json", "mcpServers"),
)
"""Project files of other hosts (path, key of its servers), read after `./.subagent/`."""
PROJECT_HOST_DIRS: tuple[str, ...] = (".codex", ".gemini", ".opencode")
"""Project folders other hosts read themselves (their config, servers, hooks, commands)."""

_INPUT = re.compile(r"\$\{input:([^}]*)\}")
_VSCODE_LITERALS = ("workspaceFolder",)
"""VS Code's variables that stand for text of ours (the project), never for a secret."""

Filter = Callable[[dict[str, Any], Path], Callable[[str], bool]]
"""A host file's parsed data -> which of its servers may run (ConfigError if malformed)."""


@dataclass(frozen=True)
class Host:
    """A host's user-level config file: where it is, its format, where servers are."""

    file: str
    format: str  # json or toml
    key: str
    entry: Entry
    allowed: Filter | None = None


HOSTS: Mapping[str, Host] = {
    "claude": Host(".claude.json", "json", "mcpServers", mcp_json_entry),
    "codex": Host(".codex/config.toml", "toml", "mcp_servers", codex_entry),
    "gemini": Host(".gemini/settings.json", "json", "mcpServers", gemini_entry, gemini_filter),
    "opencode": Host(".config/opencode/opencode.json", "json", "mcp", opencode_entry),
    "cursor": Host(".cursor/mcp.json", "json", "mcpServers", mcp_json_entry),
}
"""Hosts `--servers-from` knows, with their user-level file under HOME."""


def servers_from(env: Mapping[str, str], more: Sequence[str] = ()) -> list[str]:
    """The hosts asked for (environment, then config files), each once; UsageError if unknown."""
    asked = [h.strip() for h in settings.SERVERS_FROM.text(env).split(",") if h.strip()]
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
    allowed = host.allowed(data, path) if host.allowed is not None else None
    reading = Reading(env, warnings, where=str(path))
    entries: dict[str, object] = {}
    for name, raw in data.get(host.key, {}).items():
        if allowed is not None and not allowed(name):
            continue
        if not isinstance(raw, dict):
            raise ConfigError("expected an object", path=path, field=f"{host.key}.{name}")
        try:
            entry = host.entry(name, raw, reading)
        except EntryError as exc:
            field = f"{name}.{exc.field}"
            raise ConfigError(
                exc.message, path=path, line=_line(text, host, name, exc.field), field=field
            ) from exc
        if entry is not None:
            entries[name] = entry
    try:
        found, notes, _ = parse_servers_data(
            {host.key: entries}, text, path, env, key=host.key, skip=(ExpansionError,)
        )
    except ConfigError as exc:
        if exc.line is None and host.format == "toml" and exc.field:
            line = _line(text, host, exc.field.split(".")[0])
            raise ConfigError(exc.message, path=path, line=line, field=exc.field) from exc
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
    literals: dict[str, str] | None = None
    if key == "servers":
        vscode_inputs(text, path)
    data = parse_json(text, path)
    if isinstance(data, dict) and key != "mcpServers":
        # Theirs, not ours: other top-level keys (`inputs`) are none of our business.
        data = {key: data.get(key)}
    if key == "servers" and isinstance(data, dict):
        # Into parsed values only: a `"` or `", "--x` in the folder's name stays its text.
        data = {key: strings(data[key], lambda s: s.replace("${env:", "${"))}
        literals = dict.fromkeys(_VSCODE_LITERALS, str(path.parent.parent))
    servers, warnings, _ = parse_servers_data(
        data, text, path, env, lenient=True, key=key, literals=literals
    )
    return servers, warnings


def _line(text: str, host: Host, name: str, field: str | None = None) -> int | None:
    """The line of a server's table (TOML) or of its field (JSON), best effort."""
    if host.format == "toml":
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip().replace('"', "").startswith(f"[{host.key}.{name}"):
                return number
        return None
    keys = [host.key, name, *([field.split(".")[0]] if field else [])]
    pos, match = 0, None
    for key in keys:
        match = re.compile(re.escape(f'"{key}"') + r"\s*:").search(text, pos)
        if match is None:
            return None
        pos = match.end()
    return text.count("\n", 0, match.start()) + 1 if match is not None else None


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


def _toml(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        line = int(found.group(1)) if found else max(1, len(text.splitlines()))  # at the end
        raise ConfigError(f"invalid TOML: {exc}", path=path, line=line) from exc
