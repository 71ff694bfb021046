"""`subagent init` never writes through a planted symlink (`.subagent`, `.github`, a folder
or file below them): it exits 2 naming them. A folder it cannot write is exit 2 as well, and
init is all-or-nothing: what it wrote before the failure is removed, so a re-run works."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent

pytestmark = pytest.mark.e2e


def everything(root: Path) -> list[str]:
    """Every path below `root` (links not followed), sorted."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("planted", [".subagent", ".github"])
def test_a_symlinked_folder_is_refused_naming_it(
    subagent: Subagent, tmp_path: Path, planted: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (subagent.cwd / planted).symlink_to(outside, target_is_directory=True)
    before = everything(subagent.cwd)

    got = subagent.run("init", "--ci")

    assert got.code == 2, got.stdout + got.stderr
    assert f"{subagent.cwd / planted} is a symlink" in got.stderr
    assert "Traceback" not in got.stderr
    assert "wrote" not in got.stdout
    assert list(outside.iterdir()) == []  # nothing written outside the project
    assert everything(subagent.cwd) == before


def test_a_symlink_below_the_config_folder_is_refused(subagent: Subagent, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (subagent.cwd / ".subagent").mkdir()
    (subagent.cwd / ".subagent" / "agents").symlink_to(outside, target_is_directory=True)

    got = subagent.run("init")

    assert got.code == 2, got.stdout + got.stderr
    assert f"{subagent.cwd / '.subagent' / 'agents'} is a symlink" in got.stderr
    assert list(outside.iterdir()) == []
    assert not (subagent.cwd / ".subagent" / "mcp.json").exists()


def test_a_dangling_symlink_is_refused_without_a_traceback(subagent: Subagent) -> None:
    (subagent.cwd / ".subagent").symlink_to(subagent.cwd / "gone", target_is_directory=True)

    got = subagent.run("init")

    assert got.code == 2, got.stdout + got.stderr
    assert f"{subagent.cwd / '.subagent'} is a symlink" in got.stderr
    assert "Traceback" not in got.stderr
    assert not (subagent.cwd / "gone").exists()


def test_a_failed_write_leaves_nothing_and_a_rerun_works(subagent: Subagent) -> None:
    # The workflow's folder is a file: the last file cannot be written, after the others were.
    (subagent.cwd / ".subagent" / "agents").mkdir(parents=True)
    (subagent.cwd / ".subagent" / "agents" / "mine.md").write_text("kept\n")
    (subagent.cwd / ".github").mkdir()
    (subagent.cwd / ".github" / "workflows").write_text("not a folder\n")
    before = everything(subagent.cwd)

    got = subagent.run("init", "--ci")

    assert got.code == 2, got.stdout + got.stderr
    assert "Traceback" not in got.stderr
    assert str(subagent.cwd / ".github" / "workflows") in got.stderr
    assert everything(subagent.cwd) == before  # all or nothing; what was there stays
    assert "wrote" not in got.stdout
    (subagent.cwd / ".github" / "workflows").unlink()
    again = subagent.run("init", "--ci")
    assert again.code == 0, again.stdout + again.stderr
    assert (subagent.cwd / ".github" / "workflows" / "agents.yml").is_file()
    assert (subagent.cwd / ".subagent" / "agents" / "mine.md").read_text() == "kept\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_an_unwritable_folder_is_exit_2_and_leaves_nothing(subagent: Subagent) -> None:
    github = subagent.cwd / ".github"
    github.mkdir()
    github.chmod(0o500)
    try:
        got = subagent.run("init", "--ci")
    finally:
        github.chmod(0o700)

    assert got.code == 2, got.stdout + got.stderr
    assert "Traceback" not in got.stderr
    assert str(github) in got.stderr
    assert not (subagent.cwd / ".subagent").exists()
