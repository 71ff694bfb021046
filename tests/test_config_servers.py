"""`mcp.json`: server fields, types, defaults and `${VAR}` expansion."""

from __future__ import annotations

import json
from pathlib import Path

from launcher.config.servers import load_servers


def write(tmp_path: Path, servers: dict[str, object], **top: object) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers, **top}, indent=2))
    return path


def test_contract_example_parses(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "mcp-github": {
                "command": "python",
                "args": ["-m", "mcp_servers.github"],
                "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN:-}"},
                "cwd": ".",
                "startup_timeout": 30,
                "tool_timeout": 60,
                "required": False,
            },
            "remote": {
                "type": "http",
                "url": "http://127.0.0.1:8765/mcp",
                "headers": {"Authorization": "Bearer ${TOKEN}"},
            },
        },
    )
    servers, warnings = load_servers(path, {"TOKEN": "tok-5e2c9a71"})
    assert warnings == []
    assert list(servers) == ["mcp-github", "remote"]
    gh = servers["mcp-github"]
    assert (gh.type, gh.command, gh.args, gh.cwd) == (
        "stdio",
        "python",
        ("-m", "mcp_servers.github"),
        ".",
    )
    assert gh.env == {"GITHUB_TOKEN": ""}
    assert (gh.startup_timeout, gh.tool_timeout, gh.required) == (30.0, 60.0, False)
    assert gh.source == path
    remote = servers["remote"]
    assert (remote.type, remote.url) == ("http", "http://127.0.0.1:8765/mcp")
    assert remote.headers == {"Authorization": "Bearer tok-5e2c9a71"}
    assert remote.secrets == frozenset({"tok-5e2c9a71"})
    assert remote.raw["headers"] == {"Authorization": "Bearer ${TOKEN}"}


def test_defaults_when_fields_are_omitted(tmp_path: Path) -> None:
    servers, _ = load_servers(write(tmp_path, {"s": {"command": "srv"}}), {})
    spec = servers["s"]
    assert (spec.type, spec.args, spec.env, spec.cwd) == ("stdio", (), {}, None)
    assert (spec.startup_timeout, spec.tool_timeout) == (30.0, 60.0)
    assert (spec.required, spec.max_result_bytes) == (False, 65536)


def test_all_numeric_fields_and_required(tmp_path: Path) -> None:
    raw = {
        "command": "srv",
        "startup_timeout": 2.5,
        "tool_timeout": 1,
        "required": True,
        "max_result_bytes": 100,
    }
    spec = load_servers(write(tmp_path, {"s": raw}), {})[0]["s"]
    assert (spec.startup_timeout, spec.tool_timeout, spec.required, spec.max_result_bytes) == (
        2.5,
        1.0,
        True,
        100,
    )


def test_streamable_http_spellings_and_url_alone_mean_http(tmp_path: Path) -> None:
    url = "https://example.test/mcp"
    servers, _ = load_servers(
        write(
            tmp_path,
            {
                "a": {"type": "streamable-http", "url": url},
                "b": {"type": "streamableHttp", "url": url},
                "c": {"url": url},
            },
        ),
        {},
    )
    assert {spec.type for spec in servers.values()} == {"http"}


def test_expansion_in_command_args_env_cwd_url_and_headers(tmp_path: Path) -> None:
    env = {"BIN": "/opt/bin", "PORT": "9", "TOKEN": "t0k"}
    path = write(
        tmp_path,
        {
            "s": {
                "command": "${BIN}/srv",
                "args": ["--port=${PORT}", "--mode=${MODE:-fast}"],
                "env": {"A": "${TOKEN}", "B": "literal"},
                "cwd": "${WORKDIR:-/tmp}",
            },
            "h": {"url": "http://127.0.0.1:${PORT}/mcp", "headers": {"X-Key": "${TOKEN}"}},
        },
    )
    servers, _ = load_servers(path, env)
    s, h = servers["s"], servers["h"]
    assert (s.command, s.args, s.cwd) == ("/opt/bin/srv", ("--port=9", "--mode=fast"), "/tmp")
    assert s.env == {"A": "t0k", "B": "literal"}
    assert s.secrets == frozenset({"/opt/bin", "9", "t0k"})
    assert (h.url, h.headers) == ("http://127.0.0.1:9/mcp", {"X-Key": "t0k"})


def test_unknown_and_misplaced_fields_are_warnings(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {"s": {"command": "srv", "disabled": True, "url": "http://x"}},
        extra=1,
    )
    servers, warnings = load_servers(path, {})
    assert "s" in servers
    text = "\n".join(warnings)
    assert "'s.disabled' is unknown" in text
    assert "'s.url' does not apply to a stdio server" in text
    assert "unknown top-level field 'extra'" in text
