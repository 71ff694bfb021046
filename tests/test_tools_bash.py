"""The bash tool: output, exit codes, output cap, and killing the whole process group."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.tools_support import call, run_tool, tools

GONE_WAIT_S = 5.0


def _alive(pid: int) -> bool:
    # A killed orphan may stay a zombie when PID 1 does not reap; that is dead enough.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_gone(pid: int) -> bool:
    deadline = time.monotonic() + GONE_WAIT_S
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def _in(directory: Path) -> list[int]:
    """Live processes whose working directory is `directory` (a command's own)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue  # gone, or not ours
            if cwd == os.path.realpath(directory) and _alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def _wait_none_in(directory: Path) -> bool:
    deadline = time.monotonic() + GONE_WAIT_S
    while time.monotonic() < deadline:
        if not _in(directory):
            return True
        time.sleep(0.05)
    return False


def _read_pid(path: Path) -> int:
    deadline = time.monotonic() + GONE_WAIT_S
    while time.monotonic() < deadline:
        text = path.read_text().strip() if path.exists() else ""
        if text:
            return int(text)
        time.sleep(0.05)
    raise AssertionError(f"no pid written to {path}")


def test_bash_returns_stdout_and_stderr(tmp_path: Path) -> None:
    result = run_tool(tmp_path, "bash", command="echo out; echo err >&2")
    assert not result.is_error
    assert result.content == "out\nerr\n"


def test_bash_runs_in_the_workspace(tmp_path: Path) -> None:
    result = run_tool(tmp_path, "bash", command="pwd -P")
    assert result.content.strip() == os.path.realpath(tmp_path)


def test_bash_without_output_says_so(tmp_path: Path) -> None:
    assert run_tool(tmp_path, "bash", command="true").content == "(no output)"


def test_bash_nonzero_exit_is_an_error_with_code_and_output(tmp_path: Path) -> None:
    result = run_tool(tmp_path, "bash", command="echo oops; exit 3")
    assert result.is_error
    assert "exit code 3" in result.content
    assert "oops" in result.content


def test_bash_timeout_kills_grandchildren_and_reports_it(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    # "started" is printed once the grandchild runs and its pid is written; the timeout
    # leaves the shells seconds to get there.
    command = "bash -c 'sleep 300 & echo $! > pid; echo started; wait' & wait"
    started = time.monotonic()
    result = call(tools(tmp_path)["bash"], command=command, timeout=5)
    # The call ended at its timeout, not when `sleep 300` would have.
    assert time.monotonic() - started < 120
    assert result.is_error
    assert "timed out after 5s" in result.content
    # Whatever of the command had started, nothing is left running in its workspace
    # (a box stalled for the whole timeout kills the group before the grandchild ran).
    assert _wait_none_in(tmp_path)
    if "started" in result.content:
        assert not _alive(_read_pid(pid_file))


def test_bash_background_process_does_not_outlive_the_call(tmp_path: Path) -> None:
    result = run_tool(tmp_path, "bash", command="sleep 300 & echo $! > pid")
    assert not result.is_error
    assert _wait_gone(_read_pid(tmp_path / "pid"))


def test_bash_output_cap_keeps_head_and_tail_and_says_what_was_cut(tmp_path: Path) -> None:
    command = "echo START; head -c 100000 /dev/zero | tr '\\0' x; echo; echo END"
    result = call(tools(tmp_path, output_cap=1000)["bash"], command=command)
    assert not result.is_error
    assert result.content.startswith("START")
    assert result.content.rstrip().endswith("END")
    assert "output cut:" in result.content
    assert len(result.content) < 1200


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument 'command'"),
        ({"command": "  "}, "command is empty"),
        ({"command": "true", "timeout": -1}, "must be positive"),
        ({"command": 5}, "must be a string"),
    ],
)
def test_bash_bad_arguments_are_errors(
    tmp_path: Path, args: dict[str, object], message: str
) -> None:
    result = run_tool(tmp_path, "bash", **args)
    assert result.is_error
    assert message in result.content


def test_bash_does_not_see_credentials_from_the_launcher_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-123")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_456")
    monkeypatch.setenv("SUBAGENT_PLAIN", "visible")
    result = run_tool(tmp_path, "bash", command="env")
    assert not result.is_error
    assert "SUBAGENT_PLAIN=visible" in result.content
    assert "sk-live-123" not in result.content
    assert "ghp_456" not in result.content
