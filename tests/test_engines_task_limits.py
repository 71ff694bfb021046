"""Batch task lines carry limits (`max_tokens`, `max_cost_usd`, `timeout`, `idle_timeout`);
a task's own wins over the batch's options in the job its worker runs."""

from __future__ import annotations

import json

from launcher.engines.base import BatchTask, EngineOptions
from launcher.engines.tasks import BadLine, parse_task


def test_a_tasks_limits_win_over_the_batchs() -> None:
    line = json.dumps({"id": "a", "prompt": "p", "max_tokens": 500, "timeout": 30})
    task = parse_task(line, 1)
    assert isinstance(task, BatchTask)
    options = EngineOptions(
        config_dir=None, workspace=".", model=None, limits={"max_tokens": 9000, "max_cost_usd": 1}
    )
    job = task.job(options)
    assert job.limits == {"max_tokens": 500, "max_cost_usd": 1, "timeout": 30}


def test_a_bad_limit_is_a_bad_line_naming_the_field() -> None:
    for field, value in (("max_cost_usd", "lots"), ("timeout", -1), ("max_tokens", 1.5)):
        parsed = parse_task(json.dumps({"id": "a", "prompt": "p", field: value}), 4)
        assert isinstance(parsed, BadLine)
        assert parsed.line == 4 and f"'{field}'" in parsed.reason


def test_a_non_finite_limit_is_a_bad_line() -> None:
    # Python's json reads a bare NaN and 1e400 (inf); NaN would slip past `value <= 0`.
    for text in ("NaN", "Infinity", "1e400"):
        line = '{"id": "a", "prompt": "p", "max_cost_usd": ' + text + "}"
        parsed = parse_task(line, 2)
        assert isinstance(parsed, BadLine), text
        assert "'max_cost_usd'" in parsed.reason
