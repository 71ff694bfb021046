"""Run `subagent spawn --json` as a real process and read its event stream."""

from __future__ import annotations

import subprocess
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

__all__ = ["SpawnRun", "call_log", "spawn", "stub", "write_config"]

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


def spawn(
    config: Path,
    script: Path,
    *args: str,
    state: Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> SpawnRun:
    """Run `subagent spawn --json --config-dir CONFIG --model scripted:SCRIPT ARGS...`."""
    proc = subprocess.run(
        cli_argv(*scripted_spawn(config, script, *args)),
        capture_output=True,
        text=True,
        env=cli_env(state, env),
        cwd=cwd or config,
        timeout=SPAWN_LIMIT_S,
    )
    return SpawnRun(proc.returncode, parse_events(proc.stdout), proc.stderr)


def spawn_with_lazy(tmp_path: Path, script: str, *lazy_args: str) -> tuple[SpawnRun, Path]:
    """Spawn `--ext lazy` against a `mcp_servers.lazy` started with `lazy_args` (its schedule)
    and a call log; returns the run and the log's path."""
    log = tmp_path / "calls"
    config = write_config(
        tmp_path / "cfg", {"lazy": stub("lazy", *lazy_args, "--call-log", str(log))}
    )
    script_path = tmp_path / "s.yaml"
    script_path.write_text(script)
    return spawn(config, script_path, "--ext", "lazy", "go", state=tmp_path / "state"), log


def call_log(path: Path) -> list[dict[str, Any]]:
    """The stub server's own record of every tools/call it received."""
    if not path.exists():
        return []
    return parse_events(path.read_text())
