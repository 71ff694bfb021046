"""The server registry file `mcp.json`, parsed into ServerSpecs (shown.py displays them)."""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from launcher.config.credentials import hide, launch_credentials, url_spans
from launcher.config.expand import (
    expand,
    mask_secrets,
    unmaskable_warning,
)
from launcher.config.oauth_fields import OAUTH_FIELDS, OAuthFields
from launcher.config.types import ServerSpec
from launcher.errors import ConfigError, ExpansionError

DEFAULT_MAX_RESULT_BYTES = 64 * 1024

_HTTP_TYPES = frozenset({"http", "streamable-http", "streamableHttp", "streamable_http"})
_COMMON_FIELDS = frozenset(
    {
        "type",
        "startup_timeout",
        "tool_timeout",
        "required",
        "max_result_bytes",
        "enabled_tools",
        "disabled_tools",
    }
)
_STDIO_FIELDS = frozenset({"command", "args", "env", "cwd"})
_HTTP_FIELDS = frozenset({"url", "headers", "auth"}) | OAUTH_FIELDS


SERVERS_FROM_KEY = "servers_from"
"""Top-level key of our `mcp.json`: other hosts whose user-level servers to read too."""


def load_servers(
    path: Path, env: Mapping[str, str], *, lenient: bool = False
) -> tuple[dict[str, ServerSpec], list[str]]:
    """Read an `mcp.json` file: servers by name (file order) and warnings (unknown fields).

    `lenient` turns a bad server entry into a warning that skips it (for files other
    tools own, like Claude Code's `.mcp.json`); the file's own syntax must still hold.
    """
    servers, warnings, _ = read_server_file(path, env, lenient=lenient)
    return servers, warnings


def read_server_file(
    path: Path, env: Mapping[str, str], *, lenient: bool = False, key: str = "mcpServers"
) -> tuple[dict[str, ServerSpec], list[str], tuple[str, ...]]:
    """`load_servers` for any JSON host file whose servers are under `key`, plus the
    hosts its `servers_from` names (our own files only)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read server file: {exc}", path=path) from exc
    data = parse_json(text, path)
    return parse_servers_data(data, text, path, env, lenient=lenient, key=key)


def parse_servers_text(
    text: str, path: Path, env: Mapping[str, str], *, lenient: bool = False
) -> tuple[dict[str, ServerSpec], list[str]]:
    """Parse `mcp.json` text; `path` names the file in errors."""
    servers, warnings, _ = parse_servers_data(
        parse_json(text, path), text, path, env, lenient=lenient
    )
    return servers, warnings


def parse_json(text: str, path: Path) -> object:
    """JSON text, or ConfigError naming the file and line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno) from exc
    except RecursionError as exc:
        raise ConfigError("invalid JSON: nested too deeply", path=path) from exc


def parse_servers_data(
    data: object,
    text: str,
    path: Path,
    env: Mapping[str, str],
    *,
    lenient: bool = False,
    key: str = "mcpServers",
    skip: tuple[type[ConfigError], ...] = (),
    literals: Mapping[str, str] | None = None,
) -> tuple[dict[str, ServerSpec], list[str], tuple[str, ...]]:
    """Servers under `key` of a parsed file, its warnings, and its `servers_from` hosts.

    A server whose error is one of `skip` (every error, when `lenient`) is left out with a
    warning naming it; `literals` are names `${NAME}` stands for as text (expand.py).
    """
    if not isinstance(data, dict):
        raise ConfigError(f'expected a JSON object {{"{key}": {{...}}}}', path=path, line=1)
    warnings: list[str] = []
    servers_raw = data.get(key)
    if not isinstance(servers_raw, dict):
        other = "servers" if key == "mcpServers" else "mcpServers"
        hint = f' (found "{other}": the key is "{key}")' if other in data else ""
        raise ConfigError(
            f"expected an object of servers by name{hint}",
            path=path,
            line=_line_of(text, key) or 1,
            field=key,
        )
    hosts: tuple[str, ...] = ()
    if key == "mcpServers":
        hosts = _hosts(data.get(SERVERS_FROM_KEY), path, text)
        for name in data:
            # sandbox, tool_search, prices: config/sandbox_field.py, tool_search_field.py,
            # prices_field.py
            if name not in (key, SERVERS_FROM_KEY, "sandbox", "tool_search", "prices"):
                warnings.append(f"{path}: unknown top-level field '{name}' ignored")
    parser = _ServerParser(path, text, env, warnings, key, literals)
    servers: dict[str, ServerSpec] = {}
    for name, raw in servers_raw.items():
        try:
            servers[name] = parser.parse(name, raw)
        except ConfigError as exc:
            if not (lenient or isinstance(exc, skip)):
                raise
            warnings.append(f"server skipped: {exc}")
    return servers, warnings, hosts


def _hosts(value: object, path: Path, text: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ConfigError(
            "expected a list of host names (claude, codex, gemini, opencode, ...)",
            path=path,
            line=_line_of(text, SERVERS_FROM_KEY),
            field=SERVERS_FROM_KEY,
        )
    return tuple(item.strip() for item in items if item.strip())


def parse_server_entry(
    name: str, raw: object, path: Path, env: Mapping[str, str], text: str = ""
) -> ServerSpec:
    """One server definition (an `mcp.json` entry, or one defined inline elsewhere)."""
    return _ServerParser(path, text, env, []).parse(name, raw)


def _line_of(text: str, *keys: str) -> int | None:
    """Best-effort line of a nested key: each key searched after the previous one."""
    pos = 0
    match = None
    for key in keys:
        match = re.compile(re.escape(json.dumps(key)) + r"\s*:").search(text, pos)
        if match is None:
            return None
        pos = match.end()
    return text.count("\n", 0, match.start()) + 1 if match is not None else None


class _ServerParser(OAuthFields):
    """Validates and expands one server entry at a time, collecting secrets."""

    def __init__(
        self,
        path: Path,
        text: str,
        env: Mapping[str, str],
        warnings: list[str],
        root: str = "mcpServers",
        literals: Mapping[str, str] | None = None,
    ) -> None:
        self.root = root
        self.literals = literals
        self.path = path
        self.text = text
        self.env = env
        self.warnings = warnings
        self.secrets: set[str] = set()
        self.name = ""
        self.warned: set[str] = set()  # variables already named as too short to mask

    def error(
        self, message: str, *keys: str, field: str, kind: type[ConfigError] = ConfigError
    ) -> ConfigError:
        line = _line_of(self.text, self.root, self.name, *keys)
        return kind(message, path=self.path, line=line, field=field)

    def parse(self, name: str, raw: object) -> ServerSpec:
        self.name, self.secrets = name, set()
        if not name or "/" in name:
            raise self.error("a server name must be non-empty and contain no '/'", field=name)
        if not isinstance(raw, dict):
            raise self.error("expected an object", field=name)
        server_type = self.server_type(raw)
        allowed = _COMMON_FIELDS | (_STDIO_FIELDS if server_type == "stdio" else _HTTP_FIELDS)
        if server_type == "stdio" and "auth" in raw:
            # Not a warning: a server the user meant to protect must not start unprotected.
            raise self.error(
                "'auth' applies only to http servers (stdio servers get credentials via env)",
                "auth",
                field=f"{name}.auth",
            )
        for key in raw:
            if key not in allowed:
                reason = (
                    f"does not apply to a {server_type} server"
                    if key in _STDIO_FIELDS | _HTTP_FIELDS
                    else "is unknown"
                )
                line = _line_of(self.text, self.root, name, key)
                where = f"{self.path}:{line}" if line else str(self.path)
                self.warnings.append(f"{where}: field '{name}.{key}' {reason}; ignored")
        common: dict[str, Any] = {
            "startup_timeout": self.seconds(raw, "startup_timeout", 30.0),
            "tool_timeout": self.seconds(raw, "tool_timeout", 60.0),
            "required": self.flag(raw, "required"),
            "max_result_bytes": self.positive_int(raw, "max_result_bytes"),
            "enabled_tools": self.string_list(raw, "enabled_tools", None) or None,
            "disabled_tools": self.string_list(raw, "disabled_tools"),
        }
        if "enabled_tools" in raw and common["enabled_tools"] is None:
            common["enabled_tools"] = ()  # an empty allowlist allows nothing
        if server_type == "stdio":
            command = self.string(raw, "command", required=True)
            args = self.string_list(raw, "args")
            env = self.string_map(raw, "env")
            cwd = self.string(raw, "cwd")
            self.secrets |= launch_credentials(args=args, env=env)
            return ServerSpec(
                name=name,
                type="stdio",
                command=command,
                args=args,
                env=env,
                cwd=cwd,
                **common,
                source=self.path,
                raw=copy.deepcopy(raw),
                secrets=frozenset(self.secrets),
            )
        url = self.string(raw, "url", required=True) or ""
        if not url.startswith(("http://", "https://")):
            shown = mask_secrets(hide(url, url_spans(url)), frozenset(self.secrets))
            raise self.error(
                f"expected an http:// or https:// URL, got '{shown}'", "url", field=f"{name}.url"
            )
        headers = self.string_map(raw, "headers")
        self.secrets |= launch_credentials(url=url, headers=headers)
        oauth = self.oauth(raw)
        return ServerSpec(
            name=name,
            type="http",
            url=url,
            headers=headers,
            auth="oauth" if oauth is not None else None,
            oauth=oauth,
            **common,
            source=self.path,
            raw=copy.deepcopy(raw),
            secrets=frozenset(self.secrets),
        )

    def server_type(self, raw: dict[str, Any]) -> str:
        kind = raw.get("type")
        if kind is None:
            if "command" in raw:
                return "stdio"
            if "url" in raw:
                return "http"
            raise self.error("expected 'command' (stdio) or 'url' (http)", field=self.name)
        if kind == "stdio":
            return "stdio"
        if kind in _HTTP_TYPES:
            return "http"
        if kind == "sse":
            message = "the SSE transport is not supported; use streamable HTTP (type: http)"
        else:
            message = f"expected type 'stdio' or 'http', got '{kind}'"
        raise self.error(message, "type", field=f"{self.name}.type")

    def expand(self, value: str, field: str, *keys: str) -> str:
        try:
            expanded = expand(value, self.env, self.literals)
        except ExpansionError as exc:
            raise self.error(str(exc), *keys, field=field, kind=ExpansionError) from exc
        self.secrets |= expanded.secrets
        for name in sorted(expanded.unmaskable - self.warned):
            self.warned.add(name)
            line = _line_of(self.text, "mcpServers", self.name, *keys)
            where = f"{self.path}:{line}" if line else str(self.path)
            self.warnings.append(unmaskable_warning(name, f"{where}: field '{field}'"))
        return expanded.value

    def string(self, raw: dict[str, Any], key: str, *, required: bool = False) -> str | None:
        value = raw.get(key)
        field = f"{self.name}.{key}"
        if value is None:
            if required:
                raise self.error(f"'{key}' is required", field=field)
            return None
        if not isinstance(value, str) or (required and not value.strip()):
            raise self.error("expected a non-empty string", key, field=field)
        return self.expand(value, field, key)

    def string_list(self, raw: dict[str, Any], key: str, default: object = ()) -> tuple[str, ...]:
        if key not in raw:
            return default  # type: ignore[return-value]
        value = raw[key]
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.error("expected a list of strings", key, field=f"{self.name}.{key}")
        return tuple(
            self.expand(item, f"{self.name}.{key}[{i}]", key) for i, item in enumerate(value)
        )

    def string_map(self, raw: dict[str, Any], key: str) -> dict[str, str]:
        value = raw.get(key, {})
        if not isinstance(value, dict):
            raise self.error("expected an object of string values", key, field=f"{self.name}.{key}")
        result: dict[str, str] = {}
        for item_key, item in value.items():
            field = f"{self.name}.{key}.{item_key}"
            if not isinstance(item, str):
                raise self.error("expected a string value", key, item_key, field=field)
            result[item_key] = self.expand(item, field, key, item_key)
        return result

    def seconds(self, raw: dict[str, Any], key: str, default: float) -> float:
        value = raw.get(key, default)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value <= 0
        ):
            raise self.error(
                f"expected a positive number of seconds, got {json.dumps(value)}",
                key,
                field=f"{self.name}.{key}",
            )
        return float(value)

    def flag(self, raw: dict[str, Any], key: str) -> bool:
        value = raw.get(key, False)
        if not isinstance(value, bool):
            raise self.error(
                f"expected true or false, got {json.dumps(value)}",
                key,
                field=f"{self.name}.{key}",
            )
        return value

    def positive_int(self, raw: dict[str, Any], key: str) -> int:
        value = raw.get(key, DEFAULT_MAX_RESULT_BYTES)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise self.error(
                f"expected a positive integer, got {json.dumps(value)}",
                key,
                field=f"{self.name}.{key}",
            )
        return value
