"""`check --jobs 2` runs two sessions at once (their event times overlap), `--jobs 1` one by
one, and neither leaves a process behind."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import Subagent, assert_all_gone, stub, write_config

AGENT = "---\nname: slow\ntools: ext:lazy\n---\nx\n"
SCRIPT = "steps:\n  - sleep: 2.0\n    say: done\n"
CHECK = "agent: slow\nsettle: 0\nrun:\n  scripted: ../slow.yaml\n  prompt: go\n"


def session_window(subagent: Subagent, session_id: str) -> tuple[float, float]:
    events = subagent.events(subagent.home / "sessions" / session_id)
    start = next(e["ts"] for e in events if e["type"] == "session_start")
    end = next(e["ts"] for e in events if e["type"] == "session_end")
    return start, end


def windows(subagent: Subagent, config: Path, jobs: str) -> list[tuple[float, float]]:
    run = subagent.run("check", "--config-dir", str(config), "--jobs", jobs, "--json")
    assert run.code == 0, run.stdout + run.stderr
    checks = run.json()["checks"]
    assert len(checks) == 2
    return [session_window(subagent, c["session_id"]) for c in checks]


def test_jobs_2_overlaps_sessions_and_jobs_1_does_not(subagent: Subagent, tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "cfg",
        {"lazy": stub("lazy", "--at", "0:early", "--marker", str(tmp_path / "lazy.started"))},
        {"slow": AGENT},
    )
    (config / "slow.yaml").write_text(SCRIPT)
    (config / "checks").mkdir()
    for name in ("one", "two"):
        (config / "checks" / f"{name}.yaml").write_text(CHECK)

    (a, b) = windows(subagent, config, "2")
    assert max(a[0], b[0]) < min(a[1], b[1]), (a, b)  # both sessions were open at once
    assert_all_gone([], tmp_path)

    (a, b) = windows(subagent, config, "1")
    assert a[1] <= b[0], (a, b)  # the second session started after the first ended
    assert_all_gone([], tmp_path)
