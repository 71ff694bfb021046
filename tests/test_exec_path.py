"""Children the launcher starts in the workspace find programs and modules off it: PATH
keeps only absolute entries, and `python -m` gets `-P` unless the module is the user's own
code in the workspace."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from launcher.bridge.process import python_args, server_environment
from launcher.exec_path import absolute_path
from launcher.hooks.runner import hook_environment


def test_absolute_path_drops_empty_and_relative_entries() -> None:
    assert absolute_path("/usr/bin::.:bin:/bin:") == "/usr/bin:/bin"
    assert absolute_path(":.") == "/bin:/usr/bin"  # nothing left: the default, never ""


def test_a_servers_declared_path_loses_its_empty_entry() -> None:
    assert server_environment({"PATH": "/usr/bin:"})["PATH"] == "/usr/bin"


def test_a_servers_inherited_path_loses_its_relative_entries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", ".:/usr/bin::node_modules/.bin")
    assert server_environment({})["PATH"] == "/usr/bin"


def test_a_hooks_path_loses_its_empty_entry(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:")
    assert hook_environment(tmp_path)["PATH"] == "/usr/bin"


def test_python_m_of_an_installed_module_gets_minus_p(tmp_path: Path) -> None:
    args = ["-m", "mcp_servers.github", "--lazy", "1"]
    assert python_args(sys.executable, args, tmp_path) == ["-P", *args]
    assert python_args(sys.executable, ["-u", "-mjson.tool"], tmp_path) == [
        "-P",
        "-u",
        "-mjson.tool",
    ]


def test_python_m_of_the_users_own_workspace_package_keeps_the_cwd(tmp_path: Path) -> None:
    (tmp_path / "my_own_server_pkg").mkdir()
    (tmp_path / "my_own_server_pkg" / "__main__.py").write_text("")
    args = ["-m", "my_own_server_pkg"]
    assert python_args(sys.executable, args, tmp_path) == args


@pytest.mark.parametrize(
    "args",
    [["-P", "-m", "json.tool"], ["-I", "-m", "json.tool"], ["script.py"], ["-c", "pass"], []],
)
def test_already_safe_or_not_m_is_left_alone(tmp_path: Path, args: list[str]) -> None:
    assert python_args(sys.executable, args, tmp_path) == args


def test_another_program_is_left_alone(tmp_path: Path) -> None:
    args = ["-m", "json.tool"]
    assert python_args("/usr/bin/env", args, tmp_path) == args


def test_a_package_in_a_workspace_subdirectory_on_the_path_counts_as_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `-P` drops only the working directory: a venv's site-packages inside it stays.
    site = tmp_path / ".venv" / "site-packages"
    (site / "their_server_pkg").mkdir(parents=True)
    (site / "their_server_pkg" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(site))
    args = ["-m", "their_server_pkg"]
    assert python_args(sys.executable, args, tmp_path) == ["-P", *args]


def test_a_path_entry_in_the_workspace_is_left_out(tmp_path: Path) -> None:
    # An activated .venv/bin or node_modules/.bin there holds what the model writes.
    workspace = tmp_path / "ws"
    (workspace / "bin").mkdir(parents=True)
    path = os.pathsep.join([str(workspace / "bin"), "/usr/bin", str(tmp_path / "wsx")])
    assert absolute_path(path, workspace) == os.pathsep.join(["/usr/bin", str(tmp_path / "wsx")])


def test_p_is_added_also_after_a_long_option_and_with_pythonsafepath_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The server's environment need not have PYTHONSAFEPATH: the launcher's is not relied on.
    monkeypatch.setenv("PYTHONSAFEPATH", "1")
    assert python_args(sys.executable, ["-m", "json.tool"], tmp_path)[0] == "-P"
    args = ["--check-hash-based-pycs", "default", "-m", "json.tool"]
    assert python_args(sys.executable, args, tmp_path) == ["-P", *args]
    assert python_args(sys.executable, ["--version"], tmp_path) == ["--version"]


def test_a_server_s_inherited_path_skips_the_workspace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    monkeypatch.setenv("PATH", os.pathsep.join([str(workspace / ".venv" / "bin"), "/usr/bin"]))
    assert server_environment({}, workspace)["PATH"] == "/usr/bin"
    declared = {"PATH": str(workspace / "bin")}  # the user's own word in mcp.json
    assert server_environment(declared, workspace)["PATH"] == str(workspace / "bin")


def test_a_hook_gets_no_path_to_code_in_the_workspace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("site.getuserbase", lambda: "/nonexistent-user-base")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "src"))
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/lib:")
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path / "bin"), "/usr/bin"]))
    env = hook_environment(tmp_path)
    assert "PYTHONPATH" not in env
    assert env["LD_LIBRARY_PATH"] == "/opt/lib"
    assert env["PATH"] == "/usr/bin"


def test_a_module_found_on_the_server_s_own_pythonpath_gets_minus_p(tmp_path: Path) -> None:
    lib, workspace = tmp_path / "lib", tmp_path / "ws"
    (lib / "only_here_pkg").mkdir(parents=True)
    (lib / "only_here_pkg" / "__init__.py").write_text("")
    workspace.mkdir()
    args = ["-m", "only_here_pkg"]
    assert python_args(sys.executable, args, workspace) == args  # not found: left as it was
    assert python_args(sys.executable, args, workspace, str(lib)) == ["-P", *args]


def test_another_name_of_this_interpreter_gets_minus_p(tmp_path: Path) -> None:
    other = tmp_path / "python3"
    other.symlink_to(sys.executable)  # a venv's python3 beside its python
    assert python_args(str(other), ["-m", "json.tool"], tmp_path)[0] == "-P"
