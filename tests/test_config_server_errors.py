"""Every bad `mcp.json` value is a ConfigError naming file and field; secrets never leak."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.config.servers import load_servers
from launcher.errors import ConfigError


def write(tmp_path: Path, server: object) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"srv": server}}, indent=2))
    return path


@pytest.mark.parametrize(
    ("server", "field", "expected"),
    [
        ({"type": "sse", "url": "http://x"}, "srv.type", "SSE transport is not supported"),
        ({"type": "ws", "url": "http://x"}, "srv.type", "expected type 'stdio' or 'http'"),
        ({"type": "http"}, "srv.url", "'url' is required"),
        ({"type": "http", "url": "ftp://x"}, "srv.url", "http:// or https://"),
        ({"type": "stdio"}, "srv.command", "'command' is required"),
        ({"command": ""}, "srv.command", "non-empty string"),
        ({"command": ["a"]}, "srv.command", "non-empty string"),
        ({"args": []}, "srv", "expected 'command' (stdio) or 'url' (http)"),
        ({"command": "c", "args": "a b"}, "srv.args", "list of strings"),
        ({"command": "c", "args": ["a", 1]}, "srv.args", "list of strings"),
        ({"command": "c", "env": ["A=1"]}, "srv.env", "object of string values"),
        ({"command": "c", "env": {"A": 1}}, "srv.env.A", "expected a string value"),
        ({"command": "c", "cwd": 3}, "srv.cwd", "string"),
        ({"url": "http://x", "headers": {"H": True}}, "srv.headers.H", "string value"),
        ({"command": "c", "startup_timeout": 0}, "srv.startup_timeout", "positive number"),
        ({"command": "c", "tool_timeout": "5"}, "srv.tool_timeout", "positive number"),
        ({"command": "c", "tool_timeout": True}, "srv.tool_timeout", "positive number"),
        ({"command": "c", "required": "yes"}, "srv.required", "true or false"),
        ({"command": "c", "max_result_bytes": 1.5}, "srv.max_result_bytes", "positive integer"),
        ({"command": "c", "max_result_bytes": -1}, "srv.max_result_bytes", "positive integer"),
        ("python", "srv", "expected an object"),
    ],
)
def test_bad_field_names_file_and_field_path(
    tmp_path: Path, server: object, field: str, expected: str
) -> None:
    path = write(tmp_path, server)
    with pytest.raises(ConfigError) as info:
        load_servers(path, {})
    error = info.value
    assert (error.path, error.field) == (path, field)
    assert str(path) in str(error) and f"field '{field}'" in str(error)
    assert expected in str(error)


def test_bad_field_error_carries_the_line_of_the_key(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        '{"mcpServers": {\n  "a": {"command": "x"},\n  "srv": {\n'
        '    "command": "c",\n    "required": "no"\n  }\n}}\n'
    )
    with pytest.raises(ConfigError) as info:
        load_servers(path, {})
    assert info.value.line == 5
    assert f"{path}:5: field 'srv.required'" in str(info.value)


def test_json_syntax_error_has_the_line(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {\n  "a": {"command": "x",}\n}}\n')
    with pytest.raises(ConfigError, match="invalid JSON") as info:
        load_servers(path, {})
    assert (info.value.path, info.value.line) == (path, 2)


def test_missing_mcp_servers_key_is_an_error_with_hint(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"servers": {}}')
    with pytest.raises(ConfigError, match="mcpServers") as info:
        load_servers(path, {})
    assert info.value.field == "mcpServers"


def test_unset_variable_names_server_field_and_variable_but_no_secret(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {"command": "c", "args": ["${OTHER}"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
    )
    with pytest.raises(ConfigError) as info:
        load_servers(path, {"OTHER": "hunter2-secret"})
    message = str(info.value)
    assert info.value.field == "srv.env.GITHUB_TOKEN"
    assert str(path) in message and "GITHUB_TOKEN is not set" in message
    assert "hunter2-secret" not in message
    assert "hunter2-secret" not in repr(info.value.__cause__)


def test_unset_variable_in_args_names_the_index(tmp_path: Path) -> None:
    path = write(tmp_path, {"command": "c", "args": ["ok", "${NOPE}"]})
    with pytest.raises(ConfigError, match="NOPE") as info:
        load_servers(path, {})
    assert info.value.field == "srv.args[1]"


def test_server_name_with_slash_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"a/b": {"command": "c"}}}))
    with pytest.raises(ConfigError, match="no '/'") as info:
        load_servers(path, {})
    assert info.value.field == "a/b"
