"""Exit statuses of `subagent tools` / `spawn` (CONTRACT.md): bad usage and bad config are 2
with the file and field named and no traceback; a failed required server is 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Run, Subagent, stub, write_config

pytestmark = pytest.mark.e2e

BAD_AGENT = """---
name: bad
tools: 42
---
Bad.
"""


def _clean_failure(run: Run, code: int) -> str:
    assert run.code == code, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stdout == ""
    return run.stderr


def test_usage_and_config_errors_exit_2_naming_file_and_field(
    tmp_path: Path, subagent: Subagent
) -> None:
    marker = tmp_path / "started"
    good = write_config(
        tmp_path / "good",
        {"alpha": stub("faulty", "--marker", str(marker), "--crash-at-start")},
        {"bad": BAD_AGENT},
    )
    bad_server = write_config(tmp_path / "bad-server", {})
    (bad_server / "mcp.json").write_text(
        json.dumps({"mcpServers": {"x": {"command": "a", "startup_timeout": "soon"}}})
    )

    unknown_agent = _clean_failure(subagent.run("tools", "nobody", "--config-dir", str(good)), 2)
    assert "unknown agent 'nobody'" in unknown_agent
    unknown_ext = _clean_failure(
        subagent.run("tools", "--ext", "nowhere", "--config-dir", str(good)), 2
    )
    assert "'nowhere'" in unknown_ext and "alpha" in unknown_ext
    broken_agent = _clean_failure(subagent.run("tools", "bad", "--config-dir", str(good)), 2)
    assert f"{good / 'agents' / 'bad.md'}:3: field 'tools'" in broken_agent
    for command in (["tools"], ["spawn", "hello"]):
        bad = _clean_failure(subagent.run(*command, "--config-dir", str(bad_server)), 2)
        assert f"{bad_server / 'mcp.json'}:1: field 'x.startup_timeout'" in bad
    assert not marker.exists()


def test_required_server_failure_exits_1_with_its_reason(
    tmp_path: Path, subagent: Subagent
) -> None:
    config = write_config(
        tmp_path / "cfg", {"needed": stub("faulty", "--crash-at-start", required=True)}
    )

    err = _clean_failure(subagent.run("tools", "--json", "--config-dir", str(config)), 1)

    assert "server 'needed': required server failed" in err
    assert "exit status 3" in err and "crashing at start as asked" in err
    (session,) = subagent.sessions()
    assert str(session / "servers" / "needed.log") in err
    end = subagent.events()[-1]
    assert end["type"] == "session_end"
    assert "required server failed" in end["error"]
