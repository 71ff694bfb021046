"""What the model's `chmod` cannot keep: the launcher's user (the model's too) owns the
workspace, so a directory made read-only (or 000) is given back this user's rwx before the
put-back, the defusing and the `$TMPDIR` removal, and what still fails refuses the session.

The unprivileged cases run as a plain user with no capability at all: as root, a forked
child takes uid and gid 65534 (the kernel then clears every capability); as any other user,
in the test's own process.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from launcher.config.types import SandboxSettings
from launcher.tools.bash import run_bash
from launcher.tools.sandbox import ShellSandbox
from launcher.trust import protected_set
from launcher.trust.guard import Guard
from launcher.trust.nested import NestedGuard
from launcher.trust.snapshot import remove_dir

NOBODY = 65534
CHILD_LIMIT_S = 120.0
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x"}


def _git(cwd: Path, *args: str) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd), **GIT_ENV}
    env |= {"GIT_COMMITTER_NAME": "u", "GIT_COMMITTER_EMAIL": "u@x"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.fixture
def place() -> Iterator[Path]:
    """A directory the plain user owns (pytest's tmp_path is root's, 0700)."""
    path = Path(tempfile.mkdtemp(prefix="subagent-ro-"))
    path.chmod(0o755)
    if os.geteuid() == 0:
        os.chown(path, NOBODY, NOBODY)
    yield path
    for dirpath, dirnames, _ in os.walk(path):  # as root: whatever modes were left
        for name in dirnames:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(dirpath, name), 0o755, follow_symlinks=False)
    shutil.rmtree(path, ignore_errors=True)


def as_plain_user(body: Callable[[], None]) -> None:
    """Run `body` as a user with no capability (a forked uid-65534 child when root)."""
    if os.geteuid() != 0:
        body()
        return
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(read)
            os.setgroups([])
            os.setresgid(NOBODY, NOBODY, NOBODY)
            os.setresuid(NOBODY, NOBODY, NOBODY)
            body()
            code = 0
        except BaseException:
            os.write(write, traceback.format_exc().encode()[-4000:])
        finally:
            os._exit(code)
    os.close(write)
    deadline = time.monotonic() + CHILD_LIMIT_S
    status = None
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    with os.fdopen(read, "rb") as said:
        message = said.read().decode(errors="replace")
    assert status is not None and os.waitstatus_to_exitcode(status) == 0, message


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_a_read_only_workspace_root_does_not_keep_a_plant(place: Path) -> None:
    def body() -> None:
        ws = place / "ws"
        ws.mkdir(mode=0o755)
        _git(ws, "init", "-q")
        guard = Guard(protected_set(ws))
        (ws / ".mcp.json").write_text('{"mcpServers": {"x": {"command": "id"}}}')
        (ws / ".subagent").mkdir()
        (ws / ".subagent/mcp.json").write_text("{}")
        (ws / ".subagent").chmod(0o555)
        ws.chmod(0o555)
        said = guard.restore()
        assert not any("could not" in line for line in said), said
        assert not os.path.lexists(ws / ".mcp.json")
        assert not os.path.lexists(ws / ".subagent")
        assert _mode(ws) == 0o755  # the mode it had at the start
        assert guard.failed == []

    as_plain_user(body)


def test_the_users_git_config_is_put_back_under_a_read_only_git(place: Path) -> None:
    def body() -> None:
        ws = place / "ws"
        ws.mkdir()
        _git(ws, "init", "-q")
        config = (ws / ".git/config").read_text()
        guard = Guard(protected_set(ws))
        with (ws / ".git/config").open("a") as out:
            out.write("[core]\n\tfsmonitor = touch /tmp/pwned\n")
        (ws / ".git/hooks/pre-commit").write_text("#!/bin/sh\ntouch /tmp/pwned\n")
        (ws / ".git/hooks").chmod(0o555)
        (ws / ".git").chmod(0o555)
        said = guard.restore()
        assert not any("could not" in line for line in said), said
        assert (ws / ".git/config").read_text() == config
        assert not os.path.lexists(ws / ".git/hooks/pre-commit")
        assert guard.failed == []

    as_plain_user(body)


def test_a_git_made_in_a_plain_read_only_workspace_is_removed_whole(place: Path) -> None:
    def body() -> None:
        ws = place / "pkg"
        ws.mkdir(mode=0o755)
        guard = Guard(protected_set(ws))
        _git(ws, "init", "-q")
        _git(ws, "config", "core.fsmonitor", "touch /tmp/pwned")
        for n in range(61):
            (ws / f".git/d{n}").mkdir()
        ws.chmod(0o555)
        said = guard.restore()
        assert not any("could not" in line for line in said), said
        assert not os.path.lexists(ws / ".git")
        assert sorted(os.listdir(ws)) == []
        assert _mode(ws) == 0o755

    as_plain_user(body)


def test_a_read_only_git_dir_is_still_defused(place: Path) -> None:
    def body() -> None:
        ws = place / "ws"
        ws.mkdir()
        _git(ws, "init", "-q")
        guard = NestedGuard.start(ws)
        _git(ws, "init", "-q", "sub")
        _git(ws / "sub", "config", "core.fsmonitor", "touch /tmp/pwned")
        (ws / "sub/.git/hooks/pre-commit").write_text("#!/bin/sh\n")
        (ws / "sub/.git/hooks").chmod(0o555)
        (ws / "sub/.git").chmod(0o555)
        ws.chmod(0o555)
        said = guard.check()
        assert said and not any("could not" in line for line in said), said
        assert "fsmonitor" not in (ws / "sub/.git/config").read_text()
        assert not os.path.lexists(ws / "sub/.git/hooks/pre-commit")
        assert guard.failed == []
        assert _mode(ws) == 0o755

    as_plain_user(body)


def test_a_private_tmpdir_with_a_000_directory_is_removed(place: Path) -> None:
    def body() -> None:
        tmp = place / "subagent-tmp-x"
        (tmp / "a/b").mkdir(parents=True)
        (tmp / "a/b/f").write_text("secret")
        (tmp / "c").mkdir()
        (tmp / "a/b").chmod(0o000)
        (tmp / "a").chmod(0o000)
        (tmp / "c").chmod(0o555)
        remove_dir(tmp)
        assert not os.path.lexists(tmp)
        assert os.listdir(place) == []  # nothing hoisted beside it

    as_plain_user(body)


def test_the_sandbox_end_removes_a_tmpdir_the_model_locked(place: Path) -> None:
    def body() -> None:
        ws = place / "ws"
        ws.mkdir()
        box = ShellSandbox(SandboxSettings(), workspace=ws, state_home=place / "st", home=place)
        box.policy()  # makes the private temporary directory
        tmp = Path(box.environment({})["TMPDIR"])
        (tmp / "a/b").mkdir(parents=True)
        (tmp / "a/b/f").write_text("secret")
        (tmp / "a").chmod(0o000)
        box.close()
        assert not os.path.lexists(tmp)
        assert box.unrepaired_at_end == []

    as_plain_user(body)


@pytest.mark.anyio
@pytest.mark.skipif(os.geteuid() != 0, reason="an immutable directory needs root to make")
async def test_what_cannot_be_put_back_refuses_every_later_command(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _git(ws, "init", "-q")
    box = ShellSandbox(SandboxSettings(), workspace=ws, state_home=tmp_path / "st", home=tmp_path)
    try:
        (ws / ".subagent").mkdir()
        (ws / ".subagent/mcp.json").write_text("{}")
        # Nothing this user can undo (not even root): as a directory owned by another user.
        locked = await anyio.run_process(["chattr", "+i", str(ws / ".subagent")], check=False)
        if locked.returncode:
            pytest.skip("chattr +i is not supported here")
        result = await run_bash("true", ws, 30.0, 10_000, sandbox=box)
        assert result.is_error and "could not be put back" in result.content
        assert box.unrepaired == [".subagent"]
        result = await run_bash(f"touch {ws}/ran", ws, 30.0, 10_000, sandbox=box)
        assert result.is_error and "no more commands are run" in result.content
        assert not (ws / "ran").exists()
    finally:
        await anyio.run_process(["chattr", "-i", str(ws / ".subagent")], check=False)
        box.close()
    assert box.unrepaired_at_end == [".subagent"] or not (ws / ".subagent").exists()
