"""`subagent agents` shows a broken agent file by its path, never as "(built-in)"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, write_config

pytestmark = pytest.mark.e2e

BROKEN = "---\nname: [unclosed\n---\nbody\n"


def test_broken_agent_file_is_listed_with_its_path(tmp_path: Path, subagent: Subagent) -> None:
    config = write_config(tmp_path / "cfg", {}, agents={"wonky": BROKEN})
    path = config / "agents" / "wonky.md"

    listed = subagent.run("agents", "--config-dir", str(config), "--json")
    human = subagent.run("agents", "--config-dir", str(config))

    (row,) = [r for r in listed.json() if r["name"] == "wonky"]
    assert row["source"] == str(path)
    assert row["error"]
    assert f"wonky  ({path})" in human.stdout
    assert "wonky  (built-in)" not in human.stdout
