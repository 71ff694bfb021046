"""A path entry in the workspace, or reaching it through a link, stays left out when the
model points that link at a directory outside it that it writes (/dev/shm)."""

from __future__ import annotations

import os
from pathlib import Path

from launcher.exec_path import absolute_path
from launcher.procs.pyenv import interpreter_env


def _ws(tmp_path: Path) -> tuple[Path, Path]:
    ws, out = tmp_path / "ws", tmp_path / "shm"  # out: a place such as /dev/shm
    ws.mkdir()
    out.mkdir()
    return ws, out


def test_path_entry_in_ws_repointed_outside(tmp_path: Path) -> None:  # S1, S4, S7
    ws, out = _ws(tmp_path)
    os.symlink(out, ws / "bin")  # what the model does in the sandbox
    assert str(ws / "bin") not in absolute_path(f"{ws}/bin:/usr/bin", ws).split(":")


def test_path_entry_outside_via_ws_symlink(tmp_path: Path) -> None:  # S10
    ws, out = _ws(tmp_path)
    os.symlink(ws / "bin", tmp_path / "outlink")  # user's, at start: ws/bin a directory
    os.symlink(out, ws / "bin")  # the model re-points ws/bin
    assert str(tmp_path / "outlink") not in absolute_path(f"{tmp_path}/outlink:/usr/bin", ws).split(
        ":"
    )


def test_pythonpath_entry_in_ws_repointed_outside(tmp_path: Path) -> None:  # S2, S5
    ws, out = _ws(tmp_path)
    os.symlink(out, ws / "src")
    env = interpreter_env({"PYTHONPATH": f"{ws}/src"}, ws)
    assert str(ws / "src") not in env.get("PYTHONPATH", "").split(":")


def test_ld_library_path_entry_in_ws_repointed_outside(tmp_path: Path) -> None:  # S3
    ws, out = _ws(tmp_path)
    os.symlink(out, ws / "lib")
    env = interpreter_env({"LD_LIBRARY_PATH": f"/usr/local/cuda/lib64:{ws}/lib"}, ws)
    assert str(ws / "lib") not in env.get("LD_LIBRARY_PATH", "").split(":")
