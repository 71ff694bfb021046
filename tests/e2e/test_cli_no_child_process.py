"""`--help`, `agents`, `servers` and every `COMMAND --help` start no child process;
`tools` does (which proves the marker check can fail)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, stub, write_config

pytestmark = pytest.mark.e2e

AGENT = """---
name: helper
tools: ext:marked
---
Helper.
"""


def _commands(help_text: str) -> list[str]:
    """Command names from the top-level help's `Commands:` section."""
    section = help_text.split("Commands:", 1)[1]
    return re.findall(r"^  (\w[\w-]*)\s", section, flags=re.MULTILINE)


def test_help_and_config_commands_start_no_server_but_tools_does(
    tmp_path: Path, subagent: Subagent
) -> None:
    marker = tmp_path / "server.started"
    # Touches the marker first thing, then exits before speaking MCP: cheap to start.
    marked = stub("faulty", "--marker", str(marker), "--crash-at-start")
    config = str(write_config(tmp_path / "cfg", {"marked": marked}, {"helper": AGENT}))

    top = subagent.run("--help", env={"SUBAGENT_CONFIG_DIR": config})
    assert top.code == 0, top.stderr
    commands = _commands(top.stdout)
    assert {"agents", "servers", "tools", "spawn"} <= set(commands)
    quiet_runs = [
        ("agents", "--config-dir", config),
        ("agents", "--json", "--config-dir", config),
        ("servers", "--config-dir", config),
        ("servers", "--json", "--config-dir", config),
        *[(command, "--help") for command in commands],
    ]
    for args in quiet_runs:
        run = subagent.run(*args, env={"SUBAGENT_CONFIG_DIR": config})
        assert run.code == 0, (args, run.stderr)
        assert not marker.exists(), f"`subagent {' '.join(args)}` started a server"

    tools = subagent.run("tools", "helper", "--json", "--config-dir", config)

    assert marker.exists()
    # A failed server that is not required: exit 0, state failed, with its error.
    assert tools.code == 0, tools.stderr
    server = tools.json()["servers"]["marked"]
    assert server["state"] == "failed"
    assert "crashing at start as asked" in server["error"]
