"""Run `subagent spawn --json` as a real process and read its event stream."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def write_config(root: Path, servers: dict[str, Any], agents: dict[str, str] | None = None) -> Path:
    """A hermetic config dir with `mcp.json` and `agents/NAME.md` files."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (root / "agents").mkdir(exist_ok=True)
    for name, text in (agents or {}).items():
        (root / "agents" / f"{name}.md").write_text(text)
    return root


def stub(name: str, *args: str) -> dict[str, Any]:
    """An mcp.json entry running one of our stub servers with this interpreter."""
    return {"command": sys.executable, "args": ["-m", f"mcp_servers.{name}", *args]}


def spawn(config: Path, script: Path, *args: str, state: Path, cwd: Path | None = None) -> SpawnRun:
    """Run `subagent spawn --json --config-dir CONFIG --model scripted:SCRIPT ARGS...`."""
    env = {**os.environ, "SUBAGENT_HOME": str(state)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "launcher.cli",
            "spawn",
            "--json",
            "--config-dir",
            str(config),
            "--model",
            f"scripted:{script}",
            *args,
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or config,
        timeout=SPAWN_LIMIT_S,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return SpawnRun(proc.returncode, events, proc.stderr)


def call_log(path: Path) -> list[dict[str, Any]]:
    """The stub server's own record of every tools/call it received."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
