"""`subagent tools --ext mcp-github` against the GitHub stub with late write tools shows
them, as a plain table when output is not a terminal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, stub, write_config

pytestmark = pytest.mark.e2e

WRITE_TOOLS = ("create_issue", "add_issue_comment")


def test_tools_ext_github_shows_late_write_tools_in_a_plain_table(
    tmp_path: Path, subagent: Subagent
) -> None:
    config = write_config(
        tmp_path / "cfg",
        {
            "mcp-github": stub("github", "--lazy", "1"),
            "other": stub("lazy", "--marker", str(tmp_path / "other.started")),
        },
    )

    run = subagent.run(
        "tools", "--ext", "mcp-github", "--settle", "2", "--verbose", "--config-dir", str(config)
    )

    assert run.code == 0, run.stderr
    rows = {
        line.split()[0]: line.split()[1:3]
        for line in run.stdout.splitlines()
        if re.match(r"^\S+\s+\S+\s+(active|muted)\b", line)
    }
    for tool in WRITE_TOOLS:
        assert rows[f"mcp-github__{tool}"] == ["mcp-github", "active"]
    assert rows["mcp-github__list_issues"] == ["mcp-github", "active"]
    assert rows["read"] == ["(built-in)", "active"]
    assert "  other: not_started, 0 tools" in run.stdout.splitlines()
    assert not (tmp_path / "other.started").exists()
    # Not a terminal: no progress line, no escape codes.
    assert "\x1b" not in run.stdout + run.stderr
    # The write tools really came late, by list_changed after the first listing.
    events = subagent.events()
    connected = next(e for e in events if e.get("state") == "connected")
    (late,) = [e for e in events if e["type"] == "tools_changed" and e["ts"] > connected["ts"]]
    assert sorted(late["added"]) == sorted(f"mcp-github__{t}" for t in WRITE_TOOLS)
    # --verbose names the session's log directory, which holds the server's stderr log.
    (session,) = subagent.sessions()
    assert f"session logs: {session}" in run.stderr
    assert (session / "servers" / "mcp-github.log").exists()
