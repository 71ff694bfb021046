"""A stdio server whose `cwd` does not exist fails with that reason, naming the directory,
not as "command not found"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, stub, write_config

pytestmark = pytest.mark.e2e


def test_missing_cwd_is_reported_as_missing_working_directory(
    tmp_path: Path, subagent: Subagent
) -> None:
    missing = tmp_path / "no-such-dir"
    config = write_config(tmp_path / "cfg", {"lost": stub("faulty", cwd=str(missing))})

    run = subagent.run("tools", "--config-dir", str(config), "--json")

    assert run.code == 0, run.stderr
    server = run.json()["servers"]["lost"]
    assert server["state"] == "failed"
    assert server["error"].startswith(f"working directory does not exist: {missing}")
    assert "command not found" not in server["error"]
