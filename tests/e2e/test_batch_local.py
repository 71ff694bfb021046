"""`subagent batch` on the local engine: bounded fan-out, resumable results, clean stops."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.e2e.batch_support import most_at_once, results, scripted_tasks, session_spans, workers
from tests.e2e.conftest import (
    Subagent,
    assert_all_gone,
    wait_until,
    write_config,
)

pytestmark = pytest.mark.e2e

BATCH_LIMIT_S = 120.0
"""Six short tasks three at a time, each a Python worker, on a loaded 2-core box."""


def test_six_tasks_three_at_a_time_every_result_and_a_rerun_skips(
    tmp_path: Path, subagent: Subagent
) -> None:
    config = write_config(tmp_path / "cfg", {})
    # The first three runs wait for each other: three sessions open at once, by construction.
    tasks = scripted_tasks(tmp_path, 6, sleep=0.5, fail={4}, barrier=3)
    out = tmp_path / "results.jsonl"
    args = ("batch", str(tasks), "--config-dir", str(config), "--out", str(out), "--jobs", "3")

    run = subagent.run(*args, timeout=BATCH_LIMIT_S)

    assert run.code == 1, run.stderr  # one task failed, the others completed
    rows = {r["id"]: r for r in results(out)}
    assert sorted(rows) == [f"t{i}" for i in range(6)]
    assert rows["t4"]["status"] == "error"
    assert "missing.yaml" in rows["t4"]["error"]
    for i in (0, 1, 2, 3, 5):
        row = rows[f"t{i}"]
        assert row["status"] == "completed"
        assert row["result"] == "answer"
        assert row["session_id"]
        assert row["duration_s"] > 0
    assert set(rows["t0"]) == {
        "id",
        "status",
        "result",
        "usage",
        "duration_s",
        "session_id",
        "error",
    }
    spans = session_spans(subagent)
    assert len(spans) == 5  # the failing task never got a session
    assert len(list((subagent.cwd / "started").iterdir())) == 5  # each passed the barrier
    assert most_at_once(spans) == 3
    assert "5 completed, 1 failed" in run.stderr
    assert "t4 failed: " in run.stderr and "missing.yaml" in run.stderr  # its error, printed

    again = subagent.run(*args, timeout=BATCH_LIMIT_S)
    # Nothing ran (failed ones are kept without --retry-failed), but t4's recorded result
    # is still a failure: the re-run says so and exits 1.
    assert again.code == 1, again.stderr
    assert len(subagent.sessions()) == 5
    assert len(results(out)) == 6
    assert "6 skipped" in again.stderr
    assert "batch: failed: t4\n" in again.stderr
    assert "t4 failed in an earlier run: " in again.stderr and "missing.yaml" in again.stderr

    # --retry-failed re-runs t4 (now fixed), and the file keeps one line per id.
    (tmp_path / "missing.yaml").write_text("steps:\n  - say: fixed\n")
    retried = subagent.run(*args, "--retry-failed", timeout=BATCH_LIMIT_S)
    assert retried.code == 0, retried.stderr
    rows_after = results(out)
    assert sorted(r["id"] for r in rows_after) == [f"t{i}" for i in range(6)]
    assert {r["id"]: r["status"] for r in rows_after}["t4"] == "completed"
    assert len(subagent.sessions()) == 6


def test_bad_lines_are_named_and_not_run_the_rest_runs(tmp_path: Path, subagent: Subagent) -> None:
    config = write_config(tmp_path / "cfg", {})
    script = tmp_path / "s.yaml"
    script.write_text("steps:\n  - say: ok\n")
    good = json.dumps({"id": "a", "prompt": "p", "model": f"scripted:{script}"})
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "\n".join([good, "{not json", json.dumps({"id": "b"}), good, json.dumps({"id": 3, "x": 1})])
        + "\n"
    )
    out = tmp_path / "r.jsonl"
    run = subagent.run("batch", str(tasks), "--config-dir", str(config), "--out", str(out))
    assert run.code == 2, run.stderr
    assert "line 2: not JSON" in run.stderr
    assert "line 3: field 'prompt'" in run.stderr
    assert "line 4: id 'a' repeats" in run.stderr
    assert "line 5: unknown field 'x'" in run.stderr
    assert [r["id"] for r in results(out)] == ["a"]
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize(
    ("signum", "code"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGKILL, -signal.SIGKILL)],
)
def test_a_signal_mid_batch_leaves_no_worker_or_server(
    tmp_path: Path, subagent: Subagent, signum: signal.Signals, code: int
) -> None:
    from tests.e2e.conftest import stub

    pids = tmp_path / "pids"
    pids.mkdir()
    config = write_config(
        tmp_path / "cfg", {"lazy": stub("lazy", "--pidfile", str(pids / "lazy.pid"))}
    )
    script = tmp_path / "long.yaml"
    script.write_text("steps:\n  - sleep: 120\n    say: never\n")
    lines = [
        json.dumps({"id": f"t{i}", "prompt": "p", "ext": ["lazy"], "model": f"scripted:{script}"})
        for i in range(4)
    ]
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join(lines) + "\n")
    out = tmp_path / "r.jsonl"
    batch = subagent.start(
        "batch", str(tasks), "--config-dir", str(config), "--out", str(out), "--jobs", "2"
    )
    try:
        # Both running tasks have their server up: the whole tree exists.
        assert wait_until(lambda: pids.joinpath("lazy.pid").exists(), 60)
        assert wait_until(lambda: len(workers(tmp_path)) >= 2, 30)
        batch.send_signal(signum)
        batch.wait(timeout=60)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()
    assert batch.returncode == code
    # Workers see their stdin close (however the driver died), stop and end their servers.
    assert_all_gone([], tmp_path)
    assert not out.exists() or results(out) == []


def test_an_out_file_in_a_missing_directory_is_a_usage_error(
    tmp_path: Path, subagent: Subagent
) -> None:
    config = write_config(tmp_path / "cfg", {})
    tasks = scripted_tasks(tmp_path, 1, sleep=0)
    out = tmp_path / "nonexistent" / "dir" / "x"

    run = subagent.run("batch", str(tasks), "--config-dir", str(config), "--out", str(out))

    assert run.code == 2, run.stderr
    assert f"--out {out}: directory {out.parent} does not exist" in run.stderr
    assert "Traceback" not in run.stderr
    assert subagent.sessions() == []  # refused before any task ran
