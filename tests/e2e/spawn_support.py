"""Run `subagent spawn --json` as a real process and read its event stream."""

from __future__ import annotations

import json
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e.conftest import (
    cli_argv,
    cli_env,
    parse_events,
    scripted_spawn,
    stub,
    write_config,
)

__all__ = ["SpawnRun", "Touch", "call_log", "spawn", "stub", "touch_at_turn", "write_config"]

SPAWN_LIMIT_S = 60.0
"""No spawn in these tests should come near this; it only bounds a hung run."""


@dataclass
class SpawnRun:
    """A finished `subagent spawn --json`: exit code, events, stderr."""

    code: int
    events: list[dict[str, Any]]
    stderr: str

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    def end(self) -> dict[str, Any]:
        (end,) = self.of_type("agent_end")
        return end

    def result_of(self, call_name: str) -> list[dict[str, Any]]:
        return [e for e in self.of_type("tool_result") if e["name"] == call_name]

    def offered(self) -> dict[int, list[str]]:
        """The tool names each turn offered, by turn number."""
        return {e["turn"]: e["tools"] for e in self.of_type("turn_start")}


@dataclass(frozen=True)
class Touch:
    """Create `path` as soon as the run emits an event `when(event)` holds for: a stub's
    `--at-file PATH:NAME` change then comes after that event, by construction."""

    when: Callable[[dict[str, Any]], bool]
    path: Path


def touch_at_turn(turn: int, path: Path) -> Touch:
    """Create `path` at turn `turn`'s `turn_start`: after that turn's tools were offered."""
    return Touch(lambda e: e["type"] == "turn_start" and e["turn"] == turn, path)


def spawn(
    config: Path,
    script: Path,
    *args: str,
    state: Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    touch: Touch | None = None,
) -> SpawnRun:
    """Run `subagent spawn --json --config-dir CONFIG --model scripted:SCRIPT ARGS...`;
    with `touch`, its events are read as they come and the file made when one matches."""
    argv = cli_argv(*scripted_spawn(config, script, *args))
    if touch is None:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            env=cli_env(state, env),
            cwd=cwd or config,
            timeout=SPAWN_LIMIT_S,
        )
        return SpawnRun(proc.returncode, parse_events(proc.stdout), proc.stderr)
    with tempfile.TemporaryFile("w+") as err:
        live = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=cli_env(state, env),
            cwd=cwd or config,
        )
        lines: list[str] = []

        def read() -> None:
            assert live.stdout is not None
            for line in live.stdout:
                lines.append(line)
                if line.startswith("{") and touch.when(json.loads(line)):
                    touch.path.touch()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            code = live.wait(timeout=SPAWN_LIMIT_S)
        finally:
            if live.poll() is None:
                live.kill()
                live.wait()
            reader.join(SPAWN_LIMIT_S)  # stdout's end follows the process's
        err.seek(0)
        return SpawnRun(code, parse_events("".join(lines)), err.read())


def spawn_with_lazy(
    tmp_path: Path, script: str, *lazy_args: str, touch: Touch | None = None
) -> tuple[SpawnRun, Path]:
    """Spawn `--ext lazy` against a `mcp_servers.lazy` started with `lazy_args` (its schedule)
    and a call log; returns the run and the log's path."""
    log = tmp_path / "calls"
    config = write_config(
        tmp_path / "cfg", {"lazy": stub("lazy", *lazy_args, "--call-log", str(log))}
    )
    script_path = tmp_path / "s.yaml"
    script_path.write_text(script)
    state = tmp_path / "state"
    return spawn(config, script_path, "--ext", "lazy", "go", state=state, touch=touch), log


def call_log(path: Path) -> list[dict[str, Any]]:
    """The stub server's own record of every tools/call it received."""
    if not path.exists():
        return []
    return parse_events(path.read_text())
