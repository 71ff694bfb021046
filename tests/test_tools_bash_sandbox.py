"""SUBAGENT_BASH_SANDBOX=1: bash runs in its own PID namespace (the launcher is invisible)
with no network, or is refused with a clear error where the OS cannot do it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from launcher.tools import sandbox
from launcher.tools.bash import run_bash

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _fresh_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "_probe", False)
    monkeypatch.setenv(sandbox.SANDBOX_VAR, "1")


async def test_sandboxed_bash_sees_no_parent_and_no_network(tmp_path: Path) -> None:
    if sandbox.sandbox_problem() is not None:
        pytest.skip(f"no user namespaces here: {sandbox.sandbox_problem()}")
    command = (
        "echo ppid=$PPID; tr '\\0' '\\n' < /proc/1/cmdline | head -1; "
        f"test -e /proc/{os.getpid()}/environ && echo launcher-visible; "
        "echo devices: $(tail -n +3 /proc/net/dev | cut -d: -f1)"
    )
    result = await run_bash(command, tmp_path, 30.0, 10_000)
    assert not result.is_error, result.content
    assert "ppid=0" in result.content  # the shell is PID 1's child of nothing outside
    assert "launcher-visible" not in result.content
    assert result.content.splitlines()[-1].split() == ["devices:", "lo"]  # no network


async def test_unavailable_sandbox_refuses_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    bash = shutil.which("bash")
    assert bash is not None
    (bin_dir / "bash").symlink_to(bash)
    monkeypatch.setenv("PATH", str(bin_dir))  # bash, but no unshare
    marker = tmp_path / "ran"
    result = await run_bash(f"touch {marker}", tmp_path, 30.0, 10_000)
    assert result.is_error
    assert "bash sandbox unavailable" in result.content and "unshare" in result.content
    assert not marker.exists()
