"""Short `${VAR}` values are warned about and mask nothing; a maskable value inside the model
spec's path leaves the stored spec intact, so `--resume` finds the script again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, stub, write_config

pytestmark = pytest.mark.e2e

LONG = "proj-9d41c7ab"
"""Long enough to be masked, and also the name of the directory the script lives in."""
SHORT = {"ONE_CHAR": "x", "SHORTUSER": "tester", "PLAINVAR_REF": "1"}
SCRIPT = """steps:
  - call: [{tool: find, args: {pattern: "*.txt"}}, {tool: read, args: {path: outside.txt}}]
  - say: "answer 1 of 1 for tester"
"""


def test_short_values_mask_nothing_and_the_stored_model_spec_resumes(
    tmp_path: Path, subagent: Subagent
) -> None:
    refs = {name: f"${{{name}}}" for name in (*SHORT, "LONGV")}
    config = write_config(tmp_path / "cfg", {"gh": stub("github", env=refs)})
    script = tmp_path / LONG / "s.yaml"
    script.parent.mkdir()
    script.write_text(SCRIPT)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "outside.txt").write_text(f"the key is {LONG}\n")
    env = {**SHORT, "LONGV": LONG}
    common = ("--json", "--config-dir", str(config), "--workspace", str(workspace))

    run = subagent.run("spawn", *common, "--model", f"scripted:{script}", "go", env=env)

    assert run.code == 0, run.stderr
    events = run.json_lines()
    results = {e["name"]: e["content"] for e in events if e["type"] == "tool_result"}
    assert results["find"] == "outside.txt"
    assert results["read"].endswith("the key is ****")  # a maskable value still is
    (end,) = [e for e in events if e["type"] == "agent_end"]
    assert end["result"] == "answer 1 of 1 for tester"
    for name in SHORT:
        assert run.stderr.count(f"${{{name}}} is shorter than") == 1, run.stderr
    assert "tester" not in run.stderr
    (stored,) = json.loads(subagent.run("log", "--json").stdout)
    assert stored["model"] == f"scripted:{script}"

    again = subagent.run("spawn", *common, "--resume", "last", "and again?", env=env)

    assert again.code == 0, again.stderr
