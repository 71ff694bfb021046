"""SIGKILL of the launcher mid-turn: `log` says interrupted; resume answers the cut call."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from launcher.store.history import INTERRUPTED
from tests.e2e.conftest import GONE_LIMIT_S, is_alive, read_pid, wait_until
from tests.e2e.model_stub import ModelStub, openai_stream
from tests.e2e.spawn_support import stub, write_config
from tests.e2e.store_support import (
    CLI_LIMIT_S,
    LineTail,
    cli_argv,
    cli_env,
    log_json,
    resume,
    run_cli,
)

pytestmark = pytest.mark.e2e

EVENT_WAIT_S = 60.0
"""Bounds the wait for the launcher to reach its tool call (servers pay an SDK import)."""


def test_a_killed_session_shows_interrupted_and_resumes_with_the_call_answered(
    tmp_path: Path, model: ModelStub
) -> None:
    state = tmp_path / "state"
    pidfile = tmp_path / "s.pid"
    config = write_config(tmp_path / "cfg", {"s": stub("lazy", "--pidfile", str(pidfile))})
    model.enqueue(openai_stream(tool_calls=[("c1", "s__sleep", {"seconds": 120})]))
    spec = ("--model", "openai:stub-model", "--base-url", model.openai_base)
    argv = cli_argv("spawn", "--json", "--config-dir", str(config), *spec, "take a nap")
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=cli_env(state)
    )
    try:
        tail = LineTail(proc)
        session_id = tail.wait_for("session_start", EVENT_WAIT_S)["session_id"]
        tail.wait_for("tool_call", EVENT_WAIT_S)
        # Alive: listed as running, and a second writer is refused.
        assert log_json(state)[0]["status"] == "running"
        refused = run_cli(state, "spawn", "--resume", session_id, "hello?", cwd=tmp_path)
        assert refused.returncode == 2
        assert "still running" in refused.stderr
        proc.send_signal(signal.SIGKILL)
        proc.wait(CLI_LIMIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(CLI_LIMIT_S)
    # The server dies with its launcher (parent-death signal), so the resume can start it.
    server = read_pid(pidfile)
    assert wait_until(lambda: not is_alive(server), GONE_LIMIT_S)

    (killed,) = log_json(state)
    assert (killed["id"], killed["status"]) == (session_id, "interrupted")
    # What the killed run's committed reply cost is kept (the stub reports 10 in, 5 out).
    assert (killed["input_tokens"], killed["output_tokens"], killed["tool_calls"]) == (10, 5, 1)
    assert log_json(state, "last")["status"] == "interrupted"

    model.enqueue(openai_stream(text="I was interrupted; here is what I know."))
    resumed = resume(state, model.openai_base, session_id, "what happened?", cwd=tmp_path)

    assert resumed.returncode == 0, resumed.stderr
    messages = model.requests[1].body["messages"]
    (call,) = [c for m in messages for c in m.get("tool_calls") or []]
    assert call["id"] == "c1"
    answers = [m for m in messages if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in answers] == [("c1", INTERRUPTED)]
    assert (
        messages.index(answers[0])
        == messages.index(next(m for m in messages if m.get("tool_calls"))) + 1
    )  # right after the call, as providers require
    assert messages[-1] == {"role": "user", "content": "what happened?"}
    (done,) = log_json(state)
    assert (done["id"], done["status"]) == (session_id, "completed")
    assert (done["input_tokens"], done["output_tokens"], done["tool_calls"]) == (20, 10, 1)
    assert done["duration_s"] > 0
