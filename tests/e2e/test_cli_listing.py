"""`subagent agents` and `subagent servers`: source files, resolved scope, secrets masked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, stub, write_config

pytestmark = pytest.mark.e2e

SECRET = "s3cr3t-token-value"

TRIAGE = """---
name: triage
description: Triage issues.
tools: read, ext:gh/list_*
---
Triage.
"""


def test_agents_and_servers_show_resolved_config_with_secrets_masked(
    tmp_path: Path, subagent: Subagent
) -> None:
    gh = stub("github", "--fixture", "${GH_TOKEN}", env={"GITHUB_TOKEN": "${GH_TOKEN}"})
    remote = {
        "type": "http",
        "url": "http://127.0.0.1:9/mcp",
        "headers": {"Authorization": "Bearer ${GH_TOKEN}"},
    }
    config = str(write_config(tmp_path / "cfg", {"gh": gh, "remote": remote}, {"triage": TRIAGE}))
    env = {"GH_TOKEN": SECRET}

    servers = subagent.run("servers", "--json", "--config-dir", config, env=env)
    human = subagent.run("servers", "--config-dir", config, env=env)
    agents = subagent.run("agents", "--json", "--config-dir", config, env=env)

    for run in (servers, human, agents):
        assert run.code == 0, run.stderr
        assert SECRET not in run.stdout + run.stderr
    specs = servers.json()
    assert specs["gh"]["env"]["GITHUB_TOKEN"] == "****"
    assert specs["gh"]["args"][-1] == "****"
    assert specs["remote"]["headers"]["Authorization"] == "Bearer ****"
    assert specs["remote"]["url"] == "http://127.0.0.1:9/mcp"
    assert "gh  stdio" in human.stdout and "remote  http" in human.stdout

    rows = {row["name"]: row for row in agents.json()}
    assert rows["triage"]["source"] == str(Path(config) / "agents" / "triage.md")
    assert rows["triage"]["builtins"] == ["read"]
    assert rows["triage"]["servers"] == ["gh"]
    assert rows["general-purpose"]["source"] is None
    assert rows["general-purpose"]["servers"] == ["gh", "remote"]
