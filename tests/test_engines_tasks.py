"""TASKS.jsonl parsing and the re-run plan of RESULTS.jsonl (pure file handling)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from launcher.cli.render import BatchBar, print_batch_summary
from launcher.engines.base import BatchTask
from launcher.engines.batch import BatchProgress, plan_rerun
from launcher.engines.tasks import BadLine, parse_task, read_tasks


def test_a_task_line_with_every_field() -> None:
    line = {"id": 7, "prompt": "p", "agent": "a", "ext": "gh", "model": "m", "workspace": "w"}
    task = parse_task(json.dumps(line), 3)
    assert task == BatchTask(
        id="7", prompt="p", line=3, agent="a", ext=("gh",), model="m", workspace="w"
    )


def test_bad_lines_say_why() -> None:
    cases = {
        "[1]": "not a JSON object",
        '{"id": "", "prompt": "p"}': "field 'id'",
        '{"id": true, "prompt": "p"}': "field 'id'",
        '{"id": "x", "prompt": " "}': "field 'prompt'",
        '{"id": "x", "prompt": "p", "ext": [1]}': "field 'ext'",
        '{"id": "x", "prompt": "p", "agent": 1}': "field 'agent'",
    }
    for text, reason in cases.items():
        bad = parse_task(text, 9)
        assert isinstance(bad, BadLine), text
        assert reason in str(bad) and str(bad).startswith("line 9:"), text


def test_blank_lines_are_skipped_and_repeated_ids_are_bad(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"id": "a", "prompt": "p"}\n\n{"id": "a", "prompt": "q"}\n')
    items = list(read_tasks(path))
    assert isinstance(items[0], BatchTask)
    assert isinstance(items[1], BadLine) and items[1].line == 3


def test_rerun_skips_finished_ids_and_retry_drops_failed_lines(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    rows = [{"id": "a", "status": "completed"}, {"id": "b", "status": "error"}]
    out.write_text("\n".join(json.dumps(r) for r in rows) + "\n" + '{"id": "c", "sta')
    kept = plan_rerun(out, retry_failed=False)
    assert kept.skip == {"a", "b"}
    assert kept.failed_before == {"b": "ended error"}
    retried = plan_rerun(out, retry_failed=True)
    assert retried.skip == {"a"}
    assert retried.failed_before == {}
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["a"]


def test_exit_code_and_progress_line() -> None:
    progress = BatchProgress(completed=2, running=1)
    assert progress.exit_code() == 0
    progress.failed = 1
    assert progress.exit_code() == 1
    progress.bad.append(BadLine(4, "x"))
    assert progress.exit_code() == 2
    out = io.StringIO()
    bar = BatchBar(out)
    bar(progress)
    bar.clear()
    assert "done 2  failed 1  running 1" in out.getvalue()


def test_a_recorded_failure_keeps_the_exit_status_1_and_the_summary_names_it() -> None:
    progress = BatchProgress(skipped=3, failed_before={"t4": "model file missing.yaml\nmore"})
    assert progress.exit_code() == 1
    progress.failures["t7"] = "worker failed: OSError"
    out = io.StringIO()
    print_batch_summary(progress, out)
    text = out.getvalue()
    assert "t7 failed: worker failed: OSError" in text
    assert "t4 failed in an earlier run: model file missing.yaml\n" in text
    assert "failed: t7, t4" in text
    assert "--retry-failed" in text
