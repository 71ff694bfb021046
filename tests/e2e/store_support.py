"""Running the CLI against a loopback model stub, and reading `subagent log`, for store tests."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

from tests.e2e.conftest import cli_argv, cli_env

__all__ = ["CLI_LIMIT_S", "LineTail", "cli_argv", "cli_env", "log_json", "resume", "run_cli"]

CLI_LIMIT_S = 90.0
"""No CLI run in these tests comes near this; it only bounds a hung run."""


def run_cli(state: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run `subagent ARGS` to its end."""
    return subprocess.run(
        cli_argv(*args),
        capture_output=True,
        text=True,
        env=cli_env(state),
        cwd=cwd,
        timeout=CLI_LIMIT_S,
    )


def resume(
    state: Path, base_url: str, ref: str, prompt: str, *, cwd: Path
) -> subprocess.CompletedProcess[str]:
    """`subagent spawn --json --base-url URL --resume REF PROMPT` to its end."""
    return run_cli(
        state, "spawn", "--json", "--base-url", base_url, "--resume", ref, prompt, cwd=cwd
    )


def log_json(state: Path, *args: str) -> Any:
    """`subagent log ARGS --json`, parsed."""
    proc = run_cli(state, "log", *args, "--json", cwd=state.parent)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


class LineTail:
    """Reads a process's stdout lines in a thread, so a test can wait for one with a bound."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(proc,), daemon=True)
        self._thread.start()

    def _pump(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def wait_for(self, kind: str, timeout: float) -> dict[str, Any]:
        """The first JSON event of type `kind`; AssertionError at EOF or after `timeout` s."""
        while True:
            line = self._lines.get(timeout=timeout)
            assert line is not None, f"stdout ended before a {kind} event"
            if line.strip() and json.loads(line).get("type") == kind:
                return dict(json.loads(line))
