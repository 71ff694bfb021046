"""Other hosts' MCP configs: project files always, user-level files only when asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.config.discovery import load_config
from launcher.errors import ConfigError, UsageError

CODEX = """
model = "o3"

[mcp_servers.tracker]
command = "tracker-mcp"
args = ["--stdio"]
env = { LEVEL = "info" }
startup_timeout_sec = 12
tool_timeout_sec = 90
enabled_tools = ["list", "get"]
disabled_tools = ["get"]

[mcp_servers.off]
command = "off-mcp"
enabled = false
"""


def project(tmp_path: Path) -> tuple[Path, Path]:
    cwd, home = tmp_path / "p", tmp_path / "home"
    cwd.mkdir()
    home.mkdir()
    return cwd, home


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_vscode_and_cursor_project_files_are_read_with_their_source(tmp_path: Path) -> None:
    cwd, home = project(tmp_path)
    vscode = {
        "inputs": [],
        "servers": {"code": {"type": "stdio", "command": "c", "args": ["${workspaceFolder}/x"]}},
    }
    write(cwd / ".vscode/mcp.json", json.dumps(vscode))
    write(cwd / ".cursor/mcp.json", json.dumps({"mcpServers": {"cur": {"command": "k"}}}))
    config = load_config(cwd=cwd, home=home, env={})
    assert config.servers["code"].args == (f"{cwd}/x",)
    assert config.servers["code"].source == cwd / ".vscode/mcp.json"
    assert config.servers["cur"].source == cwd / ".cursor/mcp.json"


def test_vscode_input_variables_are_refused_naming_them(tmp_path: Path) -> None:
    cwd, home = project(tmp_path)
    text = '{"servers": {\n "s": {"command": "c",\n  "env": {"KEY": "${input:api-key}"}}}}'
    write(cwd / ".vscode/mcp.json", text)
    with pytest.raises(ConfigError) as info:
        load_config(cwd=cwd, home=home, env={})
    assert (info.value.line, info.value.field) == (3, "input:api-key")
    assert str(info.value).startswith(f"{cwd}/.vscode/mcp.json:3:")


@pytest.mark.parametrize("name", [".vscode/mcp.json", ".cursor/mcp.json"])
def test_malformed_project_host_files_name_file_and_line(tmp_path: Path, name: str) -> None:
    cwd, home = project(tmp_path)
    write(cwd / name, '{"servers": {\n  "s": {"command": "c",}\n}}')
    with pytest.raises(ConfigError) as info:
        load_config(cwd=cwd, home=home, env={})
    assert info.value.path == cwd / name and info.value.line == 2


def test_user_level_configs_are_read_only_when_asked(tmp_path: Path) -> None:
    cwd, home = project(tmp_path)
    write(home / ".codex/config.toml", CODEX)
    write(home / ".claude.json", json.dumps({"mcpServers": {"cl": {"command": "x"}}}))
    assert load_config(cwd=cwd, home=home, env={}).servers == {}
    config = load_config(cwd=cwd, home=home, env={"SUBAGENT_SERVERS_FROM": "codex,claude"})
    assert list(config.servers) == ["tracker", "cl"]
    tracker = config.servers["tracker"]
    assert (tracker.startup_timeout, tracker.tool_timeout) == (12.0, 90.0)
    assert tracker.env == {"LEVEL": "info"} and tracker.source == home / ".codex/config.toml"
    assert [t for t in ("list", "get", "put") if tracker.offers(t)] == ["list"]


def test_our_mcp_json_can_ask_for_hosts(tmp_path: Path) -> None:
    cwd, home = project(tmp_path)
    write(
        home / ".gemini/settings.json",
        json.dumps(
            {
                "mcpServers": {
                    "g": {
                        "httpUrl": "http://127.0.0.1:9/mcp",
                        "timeout": 5000,
                        "excludeTools": ["rm"],
                    },
                    "old": {"url": "http://127.0.0.1:9/sse"},
                }
            }
        ),
    )
    write(cwd / ".subagent/mcp.json", json.dumps({"servers_from": ["gemini"], "mcpServers": {}}))
    config = load_config(cwd=cwd, home=home, env={})
    g = config.servers["g"]
    assert (g.type, g.url, g.tool_timeout, g.offers("rm")) == (
        "http",
        "http://127.0.0.1:9/mcp",
        5.0,
        False,
    )
    assert "old" not in config.servers
    assert any("SSE" in w for w in config.warnings)


def test_opencode_local_and_remote_servers(tmp_path: Path) -> None:
    cwd, home = project(tmp_path)
    write(
        home / ".config/opencode/opencode.json",
        json.dumps(
            {
                "mcp": {
                    "loc": {
                        "type": "local",
                        "command": ["npx", "-y", "srv"],
                        "environment": {"A": "1"},
                    },
                    "rem": {"type": "remote", "url": "https://mcp.example.com/mcp"},
                    "off": {"type": "local", "command": ["x"], "enabled": False},
                }
            }
        ),
    )
    config = load_config(cwd=cwd, home=home, env={"SUBAGENT_SERVERS_FROM": "opencode"})
    assert (config.servers["loc"].command, config.servers["loc"].args) == ("npx", ("-y", "srv"))
    assert config.servers["rem"].type == "http"
    assert "off" not in config.servers


def test_malformed_codex_toml_names_file_line_and_field(tmp_path: Path) -> None:
    cwd, home = project(tmp_path)
    env = {"SUBAGENT_SERVERS_FROM": "codex"}
    path = write(home / ".codex/config.toml", '[mcp_servers.t]\ncommand = "x"\nargs = [1,\n')
    with pytest.raises(ConfigError) as info:
        load_config(cwd=cwd, home=home, env=env)
    assert info.value.path == path and info.value.line is not None
    write(path, '\n[mcp_servers.t]\ncommand = "x"\nargs = "not a list"\n')
    with pytest.raises(ConfigError) as info:
        load_config(cwd=cwd, home=home, env=env)
    assert (info.value.line, info.value.field) == (2, "t.args")


def test_unknown_host_is_bad_usage(tmp_path: Path) -> None:
    cwd, home = project(tmp_path)
    with pytest.raises(UsageError) as info:
        load_config(cwd=cwd, home=home, env={"SUBAGENT_SERVERS_FROM": "emacs"})
    assert "codex" in str(info.value)
