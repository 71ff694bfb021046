"""A damaged logs.db: `log` and `--resume` fail with a message naming it; a spawn still runs."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.spawn_support import spawn, write_config
from tests.e2e.store_support import run_cli


def test_a_damaged_store_is_named_and_never_ends_a_run(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    damaged = state / "logs.db"
    damaged.write_bytes(b"not a database, just junk bytes " * 64)
    config = write_config(tmp_path / "cfg", {})
    script = tmp_path / "s.yaml"
    script.write_text("steps:\n  - say: still fine\n")

    listed = run_cli(state, "log", cwd=tmp_path)
    resumed = run_cli(state, "spawn", "--resume", "last", "again", cwd=tmp_path)
    run = spawn(config, script, "go", state=state)

    for failed in (listed, resumed):
        assert failed.returncode == 1
        assert str(damaged) in failed.stderr
        assert "Traceback" not in failed.stderr
    assert run.code == 0, run.stderr
    # The run goes on, but says once that the store missed it.
    assert run.stderr.count(f"the session store {damaged} could not be written") == 1
    assert run.end()["result"] == "still fine"
    assert (state / "sessions").is_dir()  # events.jsonl is still the raw record
