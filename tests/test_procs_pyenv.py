"""The launcher's own interpreters never read code from the directory they start in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from launcher.procs.pyenv import PACKAGE_HOME, drop_written_paths, interpreter_env


@pytest.fixture(autouse=True)
def _user_base_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    # Wherever the machine's home is, the user site is not under these tests' directories.
    monkeypatch.setattr("site.getuserbase", lambda: "/nonexistent-user-base")


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


def test_a_user_base_is_absolute_and_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(tmp_path)
    base = str(tmp_path / "base")
    assert interpreter_env({"PYTHONUSERBASE": "base"}, workspace) == {"PYTHONUSERBASE": base}
    # Inside: gone.
    out = interpreter_env({"PYTHONUSERBASE": "ws/base"}, workspace)
    assert "PYTHONUSERBASE" not in out


def test_no_user_site_when_the_workspace_holds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A workspace that is the home directory holds ~/.local's usercustomize.py.
    monkeypatch.setattr("site.getuserbase", lambda: str(tmp_path / ".local"))
    assert interpreter_env({}, tmp_path) == {"PYTHONNOUSERSITE": "1"}
    assert interpreter_env({}, tmp_path / "elsewhere") == {}


def test_compiled_files_come_from_beside_their_sources(tmp_path: Path) -> None:
    # The sandbox lets the model write places such as /dev/shm: no prefix is trusted.
    assert interpreter_env({"PYTHONPYCACHEPREFIX": "/var/cache/py"}, tmp_path) == {}


def test_the_loader_s_paths_never_name_a_directory_the_model_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, other = tmp_path / "ws", tmp_path / "other"
    workspace.mkdir()
    monkeypatch.chdir(tmp_path)
    env = {
        "LD_LIBRARY_PATH": os.pathsep.join(["/usr/local/cuda/lib64", ""]),  # CUDA's export
        "LD_PRELOAD": f"libjemalloc.so.2 ./ws/evil.so {workspace}/x.so /opt/y.so",
    }
    out = interpreter_env(env, workspace)
    assert out == {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64",
                   "LD_PRELOAD": "libjemalloc.so.2 /opt/y.so"}  # fmt: skip
    # The session's workspace, when the interpreter starts elsewhere (the watchdog).
    env = {"PYTHONPATH": str(workspace / "src")}
    assert interpreter_env(env, other, also=[workspace]) == {}


def test_this_process_drops_the_directory_it_started_in_from_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep + "/opt/lib")
    monkeypatch.setattr(sys, "path", [str(tmp_path), "/opt/lib", "/usr/lib/python3"])
    drop_written_paths(".")
    assert sys.path == ["/opt/lib", "/usr/lib/python3"]


def test_a_workspace_elsewhere_is_taken_off_this_process_s_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(tmp_path)  # started here; `--workspace ws`
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["", "ws/src", "/opt/lib"]))
    monkeypatch.setattr(sys, "path", [str(tmp_path), str(workspace / "src"), "/opt/lib"])
    drop_written_paths(workspace)
    # The start directory holds the workspace: also gone.
    assert sys.path == ["/opt/lib"]


def test_whatever_lies_in_the_workspace_leaves_this_process_s_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `python -m launcher.cli serve` started there put the directory first; a workspace that
    # is the home directory holds the user site. Neither needs PYTHONPATH.
    import sys

    user_site = tmp_path / ".local" / "lib" / "site-packages"
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.setattr(sys, "path", [str(tmp_path), "/usr/lib/python3", str(user_site), ""])
    drop_written_paths(tmp_path)
    assert sys.path == ["/usr/lib/python3"]


def test_the_loader_s_other_spellings_and_audit_libraries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    env = {"LD_LIBRARY_PATH": "/opt/lib;", "LD_AUDIT": "./audit.so libaudit.so /opt/a.so"}
    assert interpreter_env(env, workspace) == {
        "LD_LIBRARY_PATH": "/opt/lib",
        "LD_AUDIT": "libaudit.so /opt/a.so",
    }
