"""`--servers-from` reads other hosts' user-level configs; nothing reads them without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, stub

pytestmark = pytest.mark.e2e


def home(subagent: Subagent) -> dict[str, str]:
    path = subagent.cwd.parent / "home"
    path.mkdir(exist_ok=True)
    return {"HOME": str(path)}


def test_codex_servers_only_with_servers_from(subagent: Subagent) -> None:
    env = home(subagent)
    codex = Path(env["HOME"]) / ".codex" / "config.toml"
    codex.parent.mkdir()
    lazy = stub("lazy", "--at", "0:keep", "--at", "0:drop")
    codex.write_text(
        "[mcp_servers.tracker]\n"
        f"command = {json.dumps(lazy['command'])}\n"
        f"args = {json.dumps(lazy['args'])}\n"
        'disabled_tools = ["drop"]\n'
    )
    assert "tracker" not in subagent.run("servers", "--json", env=env).json()
    listed = subagent.run("servers", "--json", "--servers-from", "codex", env=env)
    assert listed.json()["tracker"]["source"] == str(codex)

    report = subagent.run(
        "tools", "--json", "--servers-from", "codex", "--settle", "1", env=env
    ).json()
    active = {t["tool"] for t in report["active"] if t["server"] == "tracker"}
    assert "keep" in active and "drop" not in active
    assert ("drop", "off in the server's config") in {
        (m["tool"], m["reason"]) for m in report["muted"]
    }

    codex.write_text("[mcp_servers.tracker]\ncommand = [\n")
    broken = subagent.run("servers", "--servers-from", "codex", env=env)
    assert broken.code == 2 and f"{codex}:" in broken.stderr
    assert "Traceback" not in broken.stderr


@pytest.mark.parametrize("name", [".vscode/mcp.json", ".cursor/mcp.json"])
def test_project_host_files_are_listed_and_a_malformed_one_is_exit_2(
    subagent: Subagent, name: str
) -> None:
    env = home(subagent)
    path = subagent.cwd / name
    path.parent.mkdir()
    key = "servers" if name.startswith(".vscode") else "mcpServers"
    path.write_text(json.dumps({key: {"here": stub("lazy")}}))
    assert subagent.run("servers", "--json", env=env).json()["here"]["source"] == str(path)
    path.write_text('{"' + key + '": {"here": }}')
    broken = subagent.run("servers", env=env)
    assert broken.code == 2 and f"{path}:1:" in broken.stderr
