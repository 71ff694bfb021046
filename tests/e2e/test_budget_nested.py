"""A nested sub-agent's limits are clamped to what its parent has left, and its usage rolls
up: `usage` stays the parent's own, `usage.total` adds the child's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.budget_support import spawn_json, stub_env
from tests.e2e.model_stub import ModelStub, openai_stream
from tests.e2e.spawn_support import write_config

pytestmark = pytest.mark.e2e

PARENT = """---
name: boss
model: openai:stub-model
tools: subagent
allowed_subagents: helper
max_tokens: 1000
---
Delegate.
"""
CHILD = """---
name: helper
model: openai:stub-model
tools: none
max_tokens: 5000
---
Help.
"""


def child_events(state: Path) -> list[dict]:
    for session in (state / "sessions").iterdir():
        lines = (session / "events.jsonl").read_text().splitlines()
        events = [json.loads(line) for line in lines if line.strip()]
        if events[0]["agent"] == "helper":
            return events
    raise AssertionError("no session of the child was recorded")


def test_a_child_is_clamped_to_the_parents_remainder_and_rolls_up(
    tmp_path: Path, model: ModelStub
) -> None:
    config = write_config(tmp_path / "cfg", {}, {"boss": PARENT, "helper": CHILD})
    model.enqueue(
        openai_stream(
            tool_calls=[("c1", "subagent", {"agent": "helper", "prompt": "help"})],
            usage=(80, 20),
        ),
        openai_stream(text="helped", usage=(250, 50)),  # the child's one reply
        openai_stream(text="all done", usage=(80, 20)),
    )
    state = tmp_path / "state"
    run = spawn_json(
        config, "boss", "go", state=state, env=stub_env(model.openai_base), cwd=tmp_path
    )

    assert run.code == 0, run.stderr
    end = run.end()
    assert end["status"] == "completed"
    usage = end["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (160, 40)  # its own
    total = usage["total"]
    assert (total["input_tokens"], total["output_tokens"]) == (410, 90)  # the child's too
    assert total["turns"] == 3
    assert run.of_type("budget")[-1]["used"]["tokens"] == 500

    child = child_events(state)
    child_budget = next(e for e in child if e["type"] == "budget")
    assert child_budget["limits"]["max_tokens"] == 900  # 1000 less the parent's first reply
    (child_end,) = [e for e in child if e["type"] == "agent_end"]
    assert child_end["usage"]["input_tokens"] == 250
