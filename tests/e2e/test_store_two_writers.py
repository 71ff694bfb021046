"""Two sessions writing the store at once, from two processes, lose nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import scripted_spawn
from tests.e2e.spawn_support import write_config
from tests.e2e.store_support import CLI_LIMIT_S, cli_argv, cli_env, log_json

pytestmark = pytest.mark.e2e

TURNS = 30
CALLS = 3
"""Per turn: each turn commits the model's reply, then its tool results, in one transaction."""


def _script(path: Path, word: str) -> Path:
    step = "  - call: [" + ", ".join(["{tool: ls, args: {}}"] * CALLS) + "]\n"
    path.write_text("steps:\n" + step * TURNS + f"  - say: finished {word}\n")
    return path


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    config = write_config(tmp_path / "cfg", {})
    procs = [
        subprocess.Popen(
            cli_argv(
                *scripted_spawn(config, _script(tmp_path / f"{word}.yaml", word), f"writer {word}")
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(state),
            cwd=tmp_path,
        )
        for word in ("alpha", "beta")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=CLI_LIMIT_S)
        assert proc.returncode == 0, err

    listed = log_json(state)
    assert sorted(s["prompt"] for s in listed) == ["writer alpha", "writer beta"]
    for session in listed:
        word = session["prompt"].split()[1]
        assert (session["status"], session["turns"]) == ("completed", TURNS + 1)
        assert session["tool_calls"] == TURNS * CALLS
        conv = log_json(state, session["id"])
        roles = [m["role"] for m in conv["messages"]]
        assert roles == ["user"] + (["assistant"] + ["tool"] * CALLS) * TURNS + ["assistant"]
        called = [
            c["id"] for m in conv["messages"] if m["role"] == "assistant" for c in m["tool_calls"]
        ]
        answered = [m["tool_call_id"] for m in conv["messages"] if m["role"] == "tool"]
        assert sorted(called) == sorted(answered) and len(set(called)) == TURNS * CALLS
        assert conv["messages"][-1]["content"] == f"finished {word}"
        found = log_json(state, "-q", f"finished {word}")
        assert [s["id"] for s in found] == [session["id"]]
