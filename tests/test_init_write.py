"""init's writer follows no link even when one appears after the up-front check (a swap):
the write fails naming it, and what the call created is removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.cli.init_files import Planned
from launcher.cli.init_write import write_all
from launcher.errors import UsageError


def test_a_link_swapped_in_after_the_check_is_not_followed(tmp_path: Path) -> None:
    root, outside = tmp_path / "project", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / ".github").symlink_to(outside, target_is_directory=True)
    planned = [
        Planned(root / ".subagent" / "mcp.json", "{}\n"),
        Planned(root / ".github" / "workflows" / "agents.yml", "name: agents\n"),
    ]

    with pytest.raises(UsageError, match=r"\.github is a symlink"):
        write_all(root, planned)

    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in root.iterdir()) == [".github"]  # .subagent/ removed again


def test_a_file_already_there_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b.txt").write_text("mine")
    planned = [Planned(tmp_path / "new.txt", "x"), Planned(tmp_path / "a" / "b.txt", "theirs")]

    with pytest.raises(UsageError, match="already exists"):
        write_all(tmp_path, planned)

    assert (tmp_path / "a" / "b.txt").read_text() == "mine"
    assert not (tmp_path / "new.txt").exists()
