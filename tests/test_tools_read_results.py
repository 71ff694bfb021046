"""`read` may also read the session's saved oversized results, by full path; nothing else may."""

from __future__ import annotations

import os
from pathlib import Path

from tests.tools_support import call, tools


def _setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    results = tmp_path / "home" / "sessions" / "S" / "results"
    results.mkdir(parents=True)
    saved = results / "call_1.txt"
    saved.write_text("".join(f"row {i}\n" for i in range(1, 101)))
    return workspace, results, saved


def test_read_pages_through_a_saved_result_by_its_full_path(tmp_path: Path) -> None:
    workspace, results, saved = _setup(tmp_path)
    read = tools(workspace, results=results)["read"]

    result = call(read, path=str(saved), offset=99, limit=5)

    assert not result.is_error, result.content
    assert result.content == "    99\trow 99\n   100\trow 100"


def test_the_results_root_is_read_only_and_only_for_read(tmp_path: Path) -> None:
    workspace, results, saved = _setup(tmp_path)
    entries = tools(workspace, results=results)

    wrote = call(entries["write"], path=str(saved), content="changed")
    edited = call(entries["edit"], path=str(saved), old="row 1\n", new="x")
    listed = call(entries["ls"], path=str(results))

    assert all(r.is_error and "outside the workspace" in r.content for r in (wrote, edited, listed))
    assert saved.read_text().startswith("row 1\nrow 2\n")


def test_read_cannot_leave_the_results_root(tmp_path: Path) -> None:
    workspace, results, _ = _setup(tmp_path)
    secret = tmp_path / "home" / "logs.db"
    secret.write_text("private")
    os.symlink(secret, results / "link.txt")
    read = tools(workspace, results=results)["read"]

    beside = call(read, path=str(secret))
    dotted = call(read, path=f"{results}/../../../logs.db")
    linked = call(read, path=str(results / "link.txt"))

    assert all(r.is_error for r in (beside, dotted, linked))
    assert "private" not in beside.content + dotted.content + linked.content


def test_without_a_results_root_read_stays_in_the_workspace(tmp_path: Path) -> None:
    workspace, _, saved = _setup(tmp_path)

    result = call(tools(workspace)["read"], path=str(saved))

    assert result.is_error and "outside the workspace" in result.content
