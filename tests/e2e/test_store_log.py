"""The session store: a spawn is listed, shown, found by its answer; resume continues it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.conftest import cli_argv, cli_env
from tests.e2e.spawn_support import spawn, write_config


def log(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_argv("log", *args), capture_output=True, text=True, env=cli_env(state), timeout=60
    )


def test_listed_shown_searched_and_resumed(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg", {})
    script = tmp_path / "s.yaml"
    script.write_text("steps:\n  - say: the answer is pineapple\n")
    state = tmp_path / "state"
    assert spawn(config, script, "find the fruit", state=state).code == 0
    listed = json.loads(log(state, "--json").stdout)
    assert [s["prompt"] for s in listed] == ["find the fruit"]
    assert listed[0]["status"] == "completed"
    found = json.loads(log(state, "-q", "pineapple", "--json").stdout)
    assert [s["id"] for s in found] == [listed[0]["id"]]
    assert json.loads(log(state, "-q", "banana", "--json").stdout) == []
    assert spawn(config, script, "--resume", "last", "and again?", state=state).code == 0
    shown = json.loads(log(state, listed[0]["id"], "--json").stdout)
    users = [m["content"] for m in shown["messages"] if m["role"] == "user"]
    assert users == ["find the fruit", "and again?"]
    assert "pineapple" in log(state, "last").stdout
