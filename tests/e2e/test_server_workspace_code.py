"""A server the launcher starts runs no code the model left in the workspace (its cwd):
`python -m mcp_servers.github` imports our stub, not a planted `mcp_servers/github.py`,
and a bare command with an empty PATH entry is not found in the workspace."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, write_config

pytestmark = pytest.mark.e2e

PLANTED = """import os, pathlib
pathlib.Path({marker!r}).write_text(str(os.getpid()))
raise SystemExit(3)
"""


def plant_package(workspace: Path, marker: Path) -> None:
    """What the model's write tool can leave in the workspace: a shadowing `mcp_servers`."""
    package = workspace / "mcp_servers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "github.py").write_text(PLANTED.format(marker=str(marker)))


@pytest.mark.parametrize("spec", ["init", "python", "this-interpreter"])
def test_python_m_server_imports_ours_not_the_workspace_copy(
    tmp_path: Path, subagent: Subagent, spec: str
) -> None:
    assert subagent.run("init").code == 0
    config = subagent.cwd / ".subagent" / "mcp.json"
    if spec != "init":
        # A config written before init added `-P` (or by hand): the launcher adds it.
        command = "python" if spec == "python" else sys.executable
        servers = {"github": {"command": command, "args": ["-m", "mcp_servers.github"]}}
        config.write_text(json.dumps({"mcpServers": servers}))
    marker = tmp_path / "planted-ran"
    plant_package(subagent.cwd, marker)

    run = subagent.run("tools", "--ext", "github")

    assert not marker.exists(), "the server ran the workspace's mcp_servers/github.py"
    assert run.code == 0, run.stderr
    assert "github__list_issues" in run.stdout


def test_empty_path_entry_does_not_run_a_workspace_executable(
    tmp_path: Path, subagent: Subagent
) -> None:
    marker = tmp_path / "planted-ran"
    program = subagent.cwd / "my-mcp-server"
    program.write_text(f"#!/bin/sh\necho $$ > {marker}\nexit 3\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    path = os.environ.get("PATH", os.defpath) + os.pathsep
    config = write_config(
        tmp_path / "cfg", {"mine": {"command": "my-mcp-server", "env": {"PATH": path}}}
    )

    run = subagent.run("tools", "--ext", "mine", "--config-dir", str(config))

    assert not marker.exists(), "the workspace's my-mcp-server ran as the server"
    assert "Traceback" not in run.stderr
    assert "mine" in run.stdout + run.stderr
