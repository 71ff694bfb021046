"""`subagent check` shows a live progress line on a terminal (stderr) and none when piped."""

from __future__ import annotations

import os
import pty
from pathlib import Path

from tests.e2e.conftest import RUN_LIMIT_S, Subagent, write_config
from tests.e2e.test_cli_progress_tty import CLEAR_LINE, _read_all

AGENT = "---\nname: quick\ntools: read\nexpect:\n  settle: 0\n  tools_present: [read]\n---\nx\n"


def test_progress_line_on_a_terminal_only(tmp_path: Path, subagent: Subagent) -> None:
    config = str(write_config(tmp_path / "cfg", {}, {"quick": AGENT}))
    master, slave = pty.openpty()
    try:
        proc = subagent.start("check", "--config-dir", config, stderr=slave)
        os.close(slave)
        on_terminal = _read_all(master, proc)
        out, _ = proc.communicate(timeout=RUN_LIMIT_S)
    finally:
        os.close(master)
    assert proc.returncode == 0, on_terminal
    assert CLEAR_LINE + "check: 0/1 done  failed 0  running 1" in on_terminal
    assert CLEAR_LINE + "check: 1/1 done  failed 0  running 0" in on_terminal
    assert on_terminal.endswith(CLEAR_LINE)  # cleared before the table prints
    assert "1 passed, 0 failed" in out
    piped = subagent.run("check", "--config-dir", config)
    assert piped.code == 0 and "\x1b" not in piped.stderr + piped.stdout
