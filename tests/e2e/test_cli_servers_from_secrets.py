"""Other hosts' configs through the real CLI: their secrets are never printed or logged, their
fields are honoured, and one server `~/.claude.json` cannot run is skipped, not fatal.

A fake HOME holds the user-level files of Claude Code, Codex, Gemini CLI and opencode, each
with credentials written as text (headers, env, URL userinfo and query, arguments) and
credentials it takes from the environment its own way.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, scripted_spawn, stub, write_config

pytestmark = pytest.mark.e2e

LITERAL = {
    "claude_header": "claude-hdr-0123456789",
    "claude_env": "claude-env-0123456789",
    "claude_url": "claude-url-0123456789",
    "codex_arg": "codex-arg-0123456789",
    "codex_userinfo": "codex-pw-0123456789",
    "gemini_header": "gemini-hdr-0123456789",
    "gemini_env": "gemini-env-0123456789",
    "opencode_arg": "opencode-arg-0123456789",
    "opencode_header": "opencode-hdr-0123456789",
    "short_p": "SHORTPsecret99",
    "conn_password": "CONNSTRPASSsecret1",
    "webhook": "WEBHOOKsecret12345",
}
FROM_ENV = {
    "FWD_TOKEN": "env-fwd-0123456789",
    "HDR_KEY": "env-hdr-0123456789",
    "BEARER": "env-bearer-0123456789",
    "OC_TOKEN": "env-oc-0123456789",
}
SECRETS = [*LITERAL.values(), *FROM_ENV.values()]
HOOK = LITERAL["webhook"]


def _home(subagent: Subagent) -> Path:
    home = subagent.cwd.parent / "user-home"
    (home / ".codex").mkdir(parents=True)
    (home / ".gemini").mkdir()
    (home / ".config/opencode").mkdir(parents=True)
    claude = {
        "mcpServers": {
            "cl-http": {
                "type": "http",
                "url": f"https://127.0.0.1:9/mcp?tenant=a&api_key={LITERAL['claude_url']}",
                "headers": {"Authorization": f"Bearer {LITERAL['claude_header']}"},
            },
            "cl-stdio": {
                "command": "srv",
                "args": ["-u", "me", "-p", LITERAL["short_p"]],
                "env": {
                    "SERVICE_TOKEN": LITERAL["claude_env"],
                    "CONN": f"Server=x;Password={LITERAL['conn_password']};",
                },
            },
            "cl-sse": {"type": "sse", "url": "https://127.0.0.1:9/sse"},
            "cl-unset": {"command": "srv", "env": {"T": "${SURELY_UNSET_TOKEN}"}},
        }
    }
    (home / ".claude.json").write_text(json.dumps(claude))
    (home / ".codex/config.toml").write_text(
        "[mcp_servers.cx-stdio]\n"
        'command = "srv"\n'
        f'args = ["--api-key", "{LITERAL["codex_arg"]}"]\n'
        'env_vars = ["FWD_TOKEN"]\n'
        "required = true\n"
        "[mcp_servers.cx-http]\n"
        f'url = "https://me:{LITERAL["codex_userinfo"]}@127.0.0.1:9/mcp"\n'
        'env_http_headers = { "X-Api-Key" = "HDR_KEY" }\n'
        'bearer_token_env_var = "BEARER"\n'
        "[mcp_servers.cx-hook]\n"
        'command = "srv"\n'
        f'env = {{ "SLACK_WEBHOOK" = "https://hooks.slack.com/services/T1/B2/{HOOK}" }}\n'
        "[mcp_servers.cx-off]\n"
        'command = "srv"\n'
        "enabled = false\n"
    )
    gemini = {
        "mcp": {"excluded": ["gm-excluded"]},
        "mcpServers": {
            "gm-http": {
                "httpUrl": "https://127.0.0.1:9/mcp",
                "headers": {"X-Goog-Api-Key": LITERAL["gemini_header"]},
            },
            "gm-stdio": {"command": "srv", "env": {"DB_PASSWORD": LITERAL["gemini_env"]}},
            "gm-excluded": {"command": "srv"},
        },
    }
    (home / ".gemini/settings.json").write_text(json.dumps(gemini))
    opencode = {
        "mcp": {
            "oc-local": {"type": "local", "command": ["srv", f"--token={LITERAL['opencode_arg']}"]},
            "oc-remote": {
                "type": "remote",
                "url": "https://127.0.0.1:9/mcp",
                "headers": {
                    "Authorization": "Bearer {env:OC_TOKEN}",
                    "X-Extra-Key": LITERAL["opencode_header"],
                },
            },
        }
    }
    (home / ".config/opencode/opencode.json").write_text(json.dumps(opencode))
    return home


def test_servers_from_every_host_prints_no_secret_and_skips_what_cannot_run(
    subagent: Subagent,
) -> None:
    env = {"HOME": str(_home(subagent)), **FROM_ENV}
    hosts = ("--servers-from", "claude,codex,gemini,opencode")
    listed = subagent.run("servers", "--json", *hosts, env=env)
    assert listed.code == 0, listed.stderr
    human = subagent.run("servers", *hosts, env=env)
    assert human.code == 0, human.stderr
    for text in (listed.stdout, listed.stderr, human.stdout, human.stderr):
        assert not [s for s in SECRETS if s in text]
    rows = listed.json()
    assert sorted(rows) == sorted(
        [
            "cl-http",
            "cl-stdio",
            "cx-stdio",
            "cx-http",
            "cx-hook",
            "gm-http",
            "gm-stdio",
            "oc-local",
            "oc-remote",
        ]
    )
    assert rows["cl-http"]["headers"] == {"Authorization": "Bearer ****"}
    assert rows["cl-http"]["url"] == "https://127.0.0.1:9/mcp?tenant=a&api_key=****"
    assert rows["cl-stdio"]["env"] == {"SERVICE_TOKEN": "****", "CONN": "Server=x;Password=****;"}
    assert rows["cl-stdio"]["args"] == ["-u", "me", "-p", "****"]
    assert rows["cx-hook"]["env"] == {
        "SLACK_WEBHOOK": "https://hooks.slack.com/services/T1/B2/****"
    }
    assert rows["cx-stdio"]["args"] == ["--api-key", "****"]
    assert rows["cx-stdio"]["env"] == {"FWD_TOKEN": "****"} and rows["cx-stdio"]["required"]
    assert rows["cx-http"]["url"] == "https://me:****@127.0.0.1:9/mcp"
    assert rows["cx-http"]["headers"] == {"X-Api-Key": "****", "Authorization": "Bearer ****"}
    assert rows["gm-http"]["headers"] == {"X-Goog-Api-Key": "****"}
    assert rows["gm-stdio"]["env"] == {"DB_PASSWORD": "****"}
    assert rows["oc-local"]["args"] == ["--token=****"]
    assert rows["oc-remote"]["headers"] == {"Authorization": "Bearer ****", "X-Extra-Key": "****"}
    # The skipped servers are named, each once a run, on stderr.
    assert "'cl-sse'" in listed.stderr and "cl-unset" in listed.stderr
    assert "SURELY_UNSET_TOKEN" in listed.stderr


def test_a_host_server_s_literal_credential_is_masked_in_its_log_and_results(
    tmp_path: Path, subagent: Subagent
) -> None:
    home = subagent.cwd.parent / "user-home"
    (home / ".codex").mkdir(parents=True)
    leaky = stub("faulty", "--echo-env", "SERVICE_TOKEN")
    token = LITERAL["codex_arg"]
    (home / ".codex/config.toml").write_text(
        "[mcp_servers.leaky]\n"
        f"command = {json.dumps(leaky['command'])}\n"
        f"args = {json.dumps(leaky['args'])}\n"
        f'env = {{ SERVICE_TOKEN = "{token}" }}\n'
    )
    config = write_config(tmp_path / "cfg", {})
    script = tmp_path / "s.json"
    steps = [{"call": [{"tool_from": "leaky/echo_env", "args": {}}]}, {"say": "done"}]
    script.write_text(json.dumps({"steps": steps}))
    run = subagent.run(
        *scripted_spawn(config, script, "--servers-from", "codex", "go"), env={"HOME": str(home)}
    )
    assert run.code == 0, run.stderr
    (result,) = [e for e in run.json_lines() if e["type"] == "tool_result"]
    assert result["name"] == "leaky__echo_env" and "SERVICE_TOKEN: ****" in result["content"]
    log = next(subagent.home.rglob("leaky.log")).read_text()
    assert "SERVICE_TOKEN=****" in log  # the server's stderr arrived, masked
    assert token not in run.stdout and token not in run.stderr
    for path in (p for p in subagent.home.rglob("*") if p.is_file()):
        assert token.encode() not in path.read_bytes(), path


def test_a_vscode_project_folder_named_like_json_stays_one_argument(subagent: Subagent) -> None:
    project = subagent.cwd / 'a", "--evil'
    (project / ".vscode").mkdir(parents=True)
    entry = {"command": "srv", "args": ["--root", "${workspaceFolder}"]}
    (project / ".vscode/mcp.json").write_text(json.dumps({"servers": {"code": entry}}))
    listed = subagent.run("servers", "--json", cwd=project)
    assert listed.code == 0, listed.stderr
    assert listed.json()["code"]["args"] == ["--root", str(project)]
