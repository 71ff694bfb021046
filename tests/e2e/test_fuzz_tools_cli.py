"""Issue 14.2 end to end: hostile tool lists from a real stub, through `subagent tools --json`.

A few generated lists (fixed seed, few examples: each one starts a real server) must give
exit 0, every tool active-and-in-scope or muted with a reason, and no traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
from fnmatch import fnmatchcase
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.e2e.conftest import cli_argv, cli_env

CLI_TIMEOUT_S = 60.0
"""One `subagent tools` run with one stub; a hang fails the example instead of stalling."""

names = st.sampled_from(
    ["", "x", "x1", "x[1]", "X", "x__y", "x" * 10_000, "Spawn_Subagent ", "é", "x y", "s__x"]
)
schemas = st.sampled_from(
    [
        {"type": "object"},
        {"type": "object", "properties": {"a": {"type": 42}}},
        {"type": "object", "required": 3},
    ]
)


def _run(tmp: Path, tools: list[dict]) -> subprocess.CompletedProcess[str]:
    listing = tmp / "tools.json"
    listing.write_text(json.dumps(tools))
    conf = tmp / "conf"
    (conf / "agents").mkdir(parents=True, exist_ok=True)
    (conf / "agents" / "scoped.md").write_text("---\ntools: [ext:s/x*]\n---\nhi\n")
    server = {
        "command": sys.executable,
        "args": ["-m", "mcp_servers.faulty", "--tools-from", str(listing)],
    }
    (conf / "mcp.json").write_text(json.dumps({"mcpServers": {"s": server, "s_": server}}))
    return subprocess.run(
        cli_argv("tools", "scoped", "--json", "--config-dir", str(conf)),
        cwd=tmp,
        env=cli_env(tmp / "state", {"HOME": str(tmp)}),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
    )


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(tools=st.lists(st.fixed_dictionaries({"name": names, "schema": schemas}), max_size=5))
@example(
    tools=[
        {"name": "x", "schema": {"type": "object"}},
        {"name": "Spawn_Subagent ", "schema": {"type": "object"}},
    ]
)
def test_hostile_tool_lists_through_the_cli(tmp_path_factory, tools: list[dict]) -> None:
    done = _run(tmp_path_factory.mktemp("fz"), tools)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    shown = json.loads(done.stdout)
    for entry in shown["active"]:
        assert entry["server"] == "s" and fnmatchcase(entry["tool"], "x*"), entry["name"][:80]
        assert entry["tool"].strip().lower() != "spawn_subagent"
    for entry in shown["muted"]:
        assert entry["reason"]
    names_shown = [e["name"] for e in shown["active"] + shown["muted"]]
    assert len(names_shown) == len(set(names_shown))
