"""While servers connect, `subagent tools` shows a live progress line, on a terminal only."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import RUN_LIMIT_S, Subagent, stub, write_config

pytestmark = pytest.mark.e2e

CLEAR_LINE = "\r\x1b[2K"


def _read_all(fd: int, proc: subprocess.Popen[str]) -> str:
    """Everything written to the pty until the process exits (bounded by RUN_LIMIT_S)."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + RUN_LIMIT_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                data = os.read(fd, 4096)
            except OSError:  # EIO: the other side closed
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    return b"".join(chunks).decode(errors="replace")


def test_progress_line_on_a_terminal_and_none_otherwise(tmp_path: Path, subagent: Subagent) -> None:
    config = str(write_config(tmp_path / "cfg", {"flaky": stub("faulty", "--crash-at-start")}))
    master, slave = pty.openpty()
    try:
        proc = subagent.start("tools", "--config-dir", config, stderr=slave)
        os.close(slave)
        on_terminal = _read_all(master, proc)
        out, _ = proc.communicate(timeout=RUN_LIMIT_S)
    finally:
        os.close(master)
    piped = subagent.run("tools", "--config-dir", config)

    assert proc.returncode == 0, on_terminal
    assert CLEAR_LINE + "flaky: starting (0)" in on_terminal
    assert "flaky: failed (0)" in on_terminal
    assert on_terminal.endswith(CLEAR_LINE)  # the line is cleared before the table prints
    assert "  flaky: failed, 0 tools" in out
    assert piped.code == 0
    assert "\x1b" not in piped.stderr + piped.stdout
    assert "  flaky: failed, 0 tools" in piped.stdout
