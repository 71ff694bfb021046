"""`timeout` and `idle_timeout` end a run that would otherwise wait: a server tool that
sleeps, a model stream that stops mid-reply (retried first), a server that never answers
`tools/call`; the status names the limit, exit 1, and no process is left."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.budget_support import spawn_json, stub_env
from tests.e2e.conftest import assert_all_gone, read_pid
from tests.e2e.model_stub import ModelStub, openai_stream, stalled
from tests.e2e.spawn_support import stub, write_config

pytestmark = pytest.mark.e2e

MODEL = ("--model", "openai:stub-model")
TIMEOUT_S = "20"
"""The run's wall-clock limit: the server's start-up (seconds on a loaded box) fits well
inside it, so the limit ends the run while the tool sleeps."""


def test_timeout_ends_a_run_whose_server_tool_sleeps(tmp_path: Path, model: ModelStub) -> None:
    pidfile = tmp_path / "lazy.pid"
    config = write_config(tmp_path / "cfg", {"lazy": stub("lazy", "--pidfile", str(pidfile))})
    model.enqueue(
        openai_stream(text="looking into it", tool_calls=[("c1", "lazy__sleep", {"seconds": 300})])
    )
    run = spawn_json(
        config,
        *MODEL,
        "--timeout",
        TIMEOUT_S,
        "go",
        state=tmp_path / "state",
        env=stub_env(model.openai_base),
        cwd=tmp_path,
    )

    assert run.code == 1, run.stderr
    end = run.end()
    assert end["status"] == "timeout"
    assert end["result"] == "looking into it"
    assert f"the run took {TIMEOUT_S} s" in end["error"]
    (call,) = run.of_type("tool_call")
    assert call["name"] == "lazy__sleep"
    assert run.of_type("tool_result") == []  # cut while the tool slept
    assert run.events[-1]["type"] == "session_end"
    assert_all_gone([read_pid(pidfile)], tmp_path)


def test_idle_timeout_cuts_a_stalled_model_stream_after_its_retries(
    tmp_path: Path, model: ModelStub
) -> None:
    config = write_config(tmp_path / "cfg", {})
    reply = openai_stream(text="I was saying something long")
    # The stream stops after two chunks, every time it is asked: four attempts (the retry
    # rules), then the run ends idle.
    model.enqueue(*(stalled(reply, keep=2) for _ in range(4)))
    run = spawn_json(
        config,
        *MODEL,
        "--idle-timeout",
        "1",
        "go",
        state=tmp_path / "state",
        env=stub_env(model.openai_base),
        cwd=tmp_path,
    )

    assert run.code == 1, run.stderr
    end = run.end()
    assert end["status"] == "idle_timeout"
    assert "stalled" in end["error"] and "4 attempts" in end["error"]
    assert len(model.requests) == 4


def test_idle_timeout_ends_a_run_whose_server_never_answers(
    tmp_path: Path, model: ModelStub
) -> None:
    pidfile = tmp_path / "faulty.pid"
    config = write_config(
        tmp_path / "cfg",
        {"faulty": stub("faulty", "--hang-on-call", "--pidfile", str(pidfile))},
    )
    model.enqueue(openai_stream(text="calling", tool_calls=[("c1", "faulty__hang", {})]))
    run = spawn_json(
        config,
        *MODEL,
        "--idle-timeout",
        "2",
        "go",
        state=tmp_path / "state",
        env=stub_env(model.openai_base),
        cwd=tmp_path,
    )

    assert run.code == 1, run.stderr
    end = run.end()
    assert end["status"] == "idle_timeout"
    assert end["result"] == "calling"
    assert "no progress for 2 s" in end["error"]
    assert_all_gone([read_pid(pidfile)], tmp_path)
