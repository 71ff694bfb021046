"""The launcher's own interpreters never read code from the directory they start in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from launcher.procs.pyenv import PACKAGE_HOME, interpreter_env


def test_an_empty_or_relative_entry_never_names_the_directory_a_worker_starts_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, workspace, lib = tmp_path / "home", tmp_path / "home" / "ws", tmp_path / "lib"
    for folder in (workspace, lib):
        folder.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)  # the launcher's own directory: relative entries mean here
    env = {"PYTHONPATH": os.pathsep.join(["", "lib", str(workspace / "sub"), str(home), "/x"])}
    out = interpreter_env({**env, "OTHER": "kept"}, workspace)
    # "" (Python: the worker's directory), inside it, and holding it: gone; "lib" absolute.
    assert out == {"PYTHONPATH": os.pathsep.join([str(lib), "/x"]), "OTHER": "kept"}


def test_the_directory_itself_by_a_relative_name_or_a_link_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "link").symlink_to(workspace)
    monkeypatch.chdir(workspace)  # `subagent serve` started in the workspace
    env = {"PYTHONPATH": os.pathsep.join([".", str(tmp_path / "link")])}
    assert interpreter_env(env, workspace) == {}


def test_the_package_s_own_directory_is_kept_wherever_it_is() -> None:
    env = {"PYTHONPATH": str(PACKAGE_HOME)}
    assert interpreter_env(env, PACKAGE_HOME) == env


@pytest.mark.parametrize("name", ["PYTHONPYCACHEPREFIX", "PYTHONUSERBASE"])
def test_a_directory_python_reads_code_from_is_absolute_and_outside(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(tmp_path)
    assert interpreter_env({name: "cache"}, workspace) == {name: str(tmp_path / "cache")}
    assert interpreter_env({name: "ws/cache"}, workspace) == {}
    assert interpreter_env({name: ""}, workspace) == {}
