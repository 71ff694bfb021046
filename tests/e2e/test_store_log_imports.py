"""`subagent log` with plain arguments loads neither typer nor pydantic (nor the SDK)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent
from tests.e2e.spawn_support import spawn, write_config
from tests.e2e.test_cli_help_imports import _imported

pytestmark = pytest.mark.e2e

SLOW = ("typer", "click", "pydantic", "rich", "mcp", "httpx", "httpx2", "anyio", "launcher.session")


def test_log_runs_without_typer(tmp_path: Path, subagent: Subagent) -> None:
    config = write_config(tmp_path / "cfg", {})
    script = tmp_path / "s.yaml"
    script.write_text("steps:\n  - say: stored\n")
    assert spawn(config, script, "remember me", state=subagent.home).code == 0

    for args in (["log"], ["log", "last", "--json"], ["log", "-q", "stored", "-n", "5"]):
        modules = _imported(args, subagent)
        assert "launcher.store.query" in modules  # it did read the store
        slow = {m for m in modules if any(m == s or m.startswith(s + ".") for s in SLOW)}
        assert slow == set(), args
