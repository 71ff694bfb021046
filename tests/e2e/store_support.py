"""Running the CLI against a loopback model stub, and reading `subagent log`, for store tests."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

CLI_LIMIT_S = 90.0
"""No CLI run in these tests comes near this; it only bounds a hung run."""


def cli_env(state: Path) -> dict[str, str]:
    """The test's environment with SUBAGENT_HOME at `state` and no model settings inherited."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUBAGENT_")}
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        env.pop(var, None)
    env["SUBAGENT_HOME"] = str(state)
    return env


def cli_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "launcher.cli", *args]


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


def log_json(state: Path, *args: str) -> Any:
    """`subagent log ARGS --json`, parsed."""
    proc = run_cli(state, "log", *args, "--json", cwd=state.parent)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


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
