"""Other hosts' fields are honoured, named when ignored, or refuse the server: VS Code's
`${workspaceFolder}` goes into parsed values only, Gemini's `mcp.allowed`/`mcp.excluded`,
Codex's `env_vars`, `env_http_headers`, `required` and `enabled`, opencode's `{env:VAR}`;
one server of `~/.claude.json` that cannot run here is skipped, not every command failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.config.discovery import load_config
from launcher.config.shown import masked_launch_spec
from launcher.errors import ConfigError

SECRET = "fwd-secret-0123456789"


def dirs(tmp_path: Path, folder: str = "p") -> tuple[Path, Path]:
    cwd, home = tmp_path / folder, tmp_path / "home"
    cwd.mkdir(parents=True)
    home.mkdir()
    return cwd, home


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def hosts(*names: str, **env: str) -> dict[str, str]:
    return {"SUBAGENT_SERVERS_FROM": ",".join(names), **env}


# ---- VS Code: ${workspaceFolder} into parsed values, never into the JSON text -------------

VSCODE = {"servers": {"code": {"command": "c", "args": ["${workspaceFolder}/x", "--flag"]}}}


@pytest.mark.parametrize("folder", ['a", "--evil', 'quo"te', "${SECRET_TOKEN}", "back\\slash"])
def test_workspace_folder_is_text_whatever_its_name(tmp_path: Path, folder: str) -> None:
    cwd, home = dirs(tmp_path, folder)
    write(cwd / ".vscode/mcp.json", json.dumps(VSCODE))
    config = load_config(cwd=cwd, home=home, env={"SECRET_TOKEN": SECRET})
    spec = config.servers["code"]
    assert spec.args == (f"{cwd}/x", "--flag")
    assert SECRET not in json.dumps(spec.args) and not spec.secrets


def test_vscode_env_variables_still_expand_as_secrets(tmp_path: Path) -> None:
    cwd, home = dirs(tmp_path)
    entry = {"command": "c", "env": {"T": "${env:FWD}"}, "args": ["${workspaceFolder}"]}
    write(cwd / ".vscode/mcp.json", json.dumps({"servers": {"code": entry}}))
    spec = load_config(cwd=cwd, home=home, env={"FWD": SECRET}).servers["code"]
    assert spec.env == {"T": SECRET} and SECRET in spec.secrets and spec.args == (str(cwd),)


# ---- Gemini: mcp.allowed / mcp.excluded ---------------------------------------------------


def gemini(home: Path, settings: dict) -> None:
    servers = {n: {"command": n} for n in ("github", "gitlab", "jira", "jira-old")}
    write(home / ".gemini/settings.json", json.dumps({**settings, "mcpServers": servers}))


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"mcp": {"allowed": ["git*", "jira"]}}, ["github", "gitlab", "jira"]),
        ({"mcp": {"excluded": ["jira*"]}}, ["github", "gitlab"]),
        ({"mcp": {"allowed": ["git*"], "excluded": ["gitlab"]}}, ["github"]),
        ({"mcp": {"allowed": []}}, []),
        ({"allowMCPServers": ["jira"], "excludeMCPServers": ["github"]}, ["jira"]),
        ({}, ["github", "gitlab", "jira", "jira-old"]),
    ],
)
def test_gemini_allowed_and_excluded_decide_which_servers_exist(
    tmp_path: Path, settings: dict, expected: list[str]
) -> None:
    cwd, home = dirs(tmp_path)
    gemini(home, settings)
    assert list(load_config(cwd=cwd, home=home, env=hosts("gemini")).servers) == expected


def test_a_malformed_gemini_allow_list_is_an_error_naming_it(tmp_path: Path) -> None:
    cwd, home = dirs(tmp_path)
    gemini(home, {"mcp": {"allowed": "github"}})
    with pytest.raises(ConfigError) as info:
        load_config(cwd=cwd, home=home, env=hosts("gemini"))
    assert info.value.field == "mcp.allowed"


# ---- Codex: env_vars, env_http_headers, required, enabled ---------------------------------

CODEX = """
[mcp_servers.local]
command = "srv"
env_vars = ["FWD_TOKEN", "NOT_SET_HERE"]
env = { LEVEL = "info" }
required = true
startup_timeout_ms = 2500

[mcp_servers.remote]
url = "https://h.example/mcp"
env_http_headers = { "X-Api-Key" = "HDR_KEY", "X-Missing" = "NOT_SET_HERE" }
http_headers = { "X-Tenant" = "acme" }
default_tools_approval_mode = "approve"
"""


def test_codex_forwards_named_variables_and_headers_as_secrets(tmp_path: Path) -> None:
    cwd, home = dirs(tmp_path)
    write(home / ".codex/config.toml", CODEX)
    env = hosts("codex", FWD_TOKEN=SECRET, HDR_KEY="hdr-" + SECRET)
    config = load_config(cwd=cwd, home=home, env=env)
    local, remote = config.servers["local"], config.servers["remote"]
    assert local.env == {"FWD_TOKEN": SECRET, "LEVEL": "info"}  # NOT_SET_HERE: not forwarded
    assert local.required is True and local.startup_timeout == 2.5
    assert remote.headers == {"X-Tenant": "acme", "X-Api-Key": "hdr-" + SECRET}
    assert {SECRET, "hdr-" + SECRET} <= local.secrets | remote.secrets
    shown = json.dumps([masked_launch_spec(local), masked_launch_spec(remote)])
    assert SECRET not in shown
    assert any("'X-Missing' is not sent: NOT_SET_HERE is not set" in w for w in config.warnings)
    assert any("'default_tools_approval_mode'" in w and "ignored" in w for w in config.warnings)


@pytest.mark.parametrize("value", ['"false"', '"no"', "0"])
def test_codex_enabled_that_is_not_a_boolean_is_an_error(tmp_path: Path, value: str) -> None:
    cwd, home = dirs(tmp_path)
    path = write(
        home / ".codex/config.toml", f'\n[mcp_servers.t]\ncommand = "x"\nenabled = {value}\n'
    )
    with pytest.raises(ConfigError) as info:
        load_config(cwd=cwd, home=home, env=hosts("codex"))
    assert (info.value.path, info.value.line, info.value.field) == (path, 2, "t.enabled")


def test_codex_literal_bearer_token_refuses_the_server(tmp_path: Path) -> None:
    cwd, home = dirs(tmp_path)
    write(
        home / ".codex/config.toml", '[mcp_servers.t]\nurl = "https://h/mcp"\nbearer_token = "x"\n'
    )
    config = load_config(cwd=cwd, home=home, env=hosts("codex"))
    assert "t" not in config.servers and any("'t'" in w for w in config.warnings)


# ---- opencode: {env:VAR} ----------------------------------------------------------------


def test_opencode_env_references_expand_and_are_masked(tmp_path: Path) -> None:
    cwd, home = dirs(tmp_path)
    mcp = {
        "rem": {
            "type": "remote",
            "url": "https://h.example/mcp?tenant={env:TENANT}",
            "headers": {"Authorization": "Bearer {env:OC_TOKEN}"},
        },
        "loc": {
            "type": "local",
            "command": ["srv", "{env:UNSET_ONE}"],
            "environment": {"K": "{env:OC_TOKEN}"},
        },
        "filed": {"type": "local", "command": ["srv"], "environment": {"K": "{file:~/.key}"}},
    }
    write(home / ".config/opencode/opencode.json", json.dumps({"mcp": mcp}))
    env = hosts("opencode", OC_TOKEN=SECRET, TENANT="acme")
    config = load_config(cwd=cwd, home=home, env=env)
    rem, loc = config.servers["rem"], config.servers["loc"]
    assert rem.headers == {"Authorization": f"Bearer {SECRET}"} and rem.url.endswith("tenant=acme")
    assert loc.args == ("",) and loc.env == {"K": SECRET}  # unset: empty, as opencode does
    assert SECRET in loc.secrets and "filed" not in config.servers
    assert masked_launch_spec(rem)["headers"] == {"Authorization": "Bearer ****"}
    assert any("'filed'" in w and "{file:" in w for w in config.warnings)


def test_opencode_enabled_string_is_an_error(tmp_path: Path) -> None:
    cwd, home = dirs(tmp_path)
    mcp = {"x": {"type": "local", "command": ["srv"], "enabled": "false"}}
    write(home / ".config/opencode/opencode.json", json.dumps({"mcp": mcp}))
    with pytest.raises(ConfigError) as info:
        load_config(cwd=cwd, home=home, env=hosts("opencode"))
    assert info.value.field == "x.enabled" and info.value.line == 1


# ---- ~/.claude.json: one server that cannot run is skipped, not every command failed -----


def test_claude_json_skips_an_sse_server_and_an_unset_variable_naming_them(tmp_path: Path) -> None:
    cwd, home = dirs(tmp_path)
    servers = {
        "old-sse": {"type": "sse", "url": "https://h.example/sse"},
        "needs-token": {"command": "srv", "env": {"T": "${UNSET_TOKEN}"}},
        "fine": {"command": "srv"},
    }
    write(home / ".claude.json", json.dumps({"numStartups": 3, "mcpServers": servers}))
    config = load_config(cwd=cwd, home=home, env=hosts("claude"))
    assert list(config.servers) == ["fine"]
    assert any("'old-sse'" in w and "skipped" in w for w in config.warnings)
    assert any("needs-token" in w and "UNSET_TOKEN" in w for w in config.warnings)
