"""Resume in a new process: the model gets the history, servers start again, tools are today's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import parse_events as events
from tests.e2e.model_stub import ModelStub, openai_stream
from tests.e2e.spawn_support import stub, write_config
from tests.e2e.store_support import log_json, resume, run_cli

pytestmark = pytest.mark.e2e


def test_resume_sends_the_history_and_offers_only_todays_tools(
    tmp_path: Path, model: ModelStub
) -> None:
    state = tmp_path / "state"
    started = {name: tmp_path / f"{name}.started" for name in ("keep", "gone", "keep2")}
    config = write_config(
        tmp_path / "cfg",
        {
            "keep": stub("lazy", "--marker", str(started["keep"])),
            "gone": stub("lazy", "--marker", str(started["gone"])),
        },
    )
    model.enqueue(
        openai_stream(tool_calls=[("c1", "gone__echo", {"text": "from gone"})]),
        openai_stream(text="first answer"),
    )
    spec = ("--model", "openai:stub-model", "--base-url", model.openai_base)
    first = run_cli(
        state, "spawn", "--json", "--config-dir", str(config), *spec, "first question", cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr
    (gone_result,) = [e for e in events(first.stdout) if e["type"] == "tool_result"]
    assert gone_result["content"] == "from gone"

    # Between the runs the `gone` server leaves the config.
    write_config(config, {"keep": stub("lazy", "--marker", str(started["keep2"]))})
    model.enqueue(openai_stream(text="second answer"))
    second = resume(state, model.openai_base, "last", "follow-up", cwd=tmp_path)

    assert second.returncode == 0, second.stderr
    run = events(second.stdout)
    assert run[0]["session_id"] == events(first.stdout)[0]["session_id"]
    assert run[0]["servers"] == ["keep"]
    assert {e["server"] for e in run if e["type"] == "server_state"} == {"keep"}
    assert started["keep2"].exists()  # the server started again, from today's config
    (turn,) = [e for e in run if e["type"] == "turn_start"]
    assert "keep__echo" in turn["tools"] and "gone__echo" not in turn["tools"]

    request = model.requests[2].body
    assert request["model"] == "stub-model"  # the stored model
    offered = {t["function"]["name"] for t in request["tools"]}
    assert "keep__echo" in offered and "gone__echo" not in offered
    sent = [(m["role"], m.get("content")) for m in request["messages"] if m["role"] != "system"]
    assert sent[0] == ("user", "first question")
    assert ("tool", "from gone") in sent
    assert ("assistant", "first answer") in sent
    assert sent[-1] == ("user", "follow-up")
    calls = [c for m in request["messages"] for c in m.get("tool_calls") or []]
    assert [c["function"]["name"] for c in calls] == ["gone__echo"]  # the old transcript

    (listed,) = log_json(state)
    assert (listed["status"], listed["turns"]) == ("completed", 3)
    assert listed["input_tokens"] == 3 * 10  # the stub's usage, over both processes
