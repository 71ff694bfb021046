"""`batch --max-cost-total`: once the tasks that ended cost the limit, the rest get a
`skipped` line naming why; a re-run runs them (one line per id in the end)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.batch_support import results
from tests.e2e.budget_support import stub_env, with_prices
from tests.e2e.conftest import Subagent, write_config
from tests.e2e.model_stub import ModelStub, openai_stream

pytestmark = pytest.mark.e2e


def test_tasks_past_the_batch_cost_are_skipped_and_a_rerun_continues(
    tmp_path: Path, subagent: Subagent, model: ModelStub
) -> None:
    config = write_config(tmp_path / "cfg", {})
    with_prices(config, {"stub-model": {"input": 1000, "output": 0}})  # $0.10 a reply
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "".join(
            json.dumps({"id": f"t{i}", "prompt": "go", "model": "openai:stub-model"}) + "\n"
            for i in range(3)
        )
    )
    out = tmp_path / "results.jsonl"
    model.enqueue(*(openai_stream(text=f"answer {i}", usage=(100, 0)) for i in range(3)))
    common = ("batch", str(tasks), "--out", str(out), "--jobs", "1")
    common += ("--config-dir", str(config))
    env = stub_env(model.openai_base)

    first = subagent.run(*common, "--max-cost-total", "0.15", env=env)

    assert first.code == 1, first.stderr
    rows = {r["id"]: r for r in results(out)}
    assert [rows[i]["status"] for i in ("t0", "t1", "t2")] == ["completed", "completed", "skipped"]
    assert rows["t0"]["usage"]["cost_usd"] == pytest.approx(0.1)
    assert "--max-cost-total $0.15 was reached" in rows["t2"]["error"]
    assert len(model.requests) == 2

    second = subagent.run(*common, "--max-cost-total", "1", env=env)

    assert second.code == 0, second.stderr
    lines = results(out)
    assert sorted(r["id"] for r in lines) == ["t0", "t1", "t2"]  # one line per id
    assert {r["id"]: r["status"] for r in lines}["t2"] == "completed"
    assert len(model.requests) == 3
