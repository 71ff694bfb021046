"""Running `subagent spawn --json` against the loopback model stub, for the budget tests."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.e2e.conftest import cli_argv, cli_env, parse_events
from tests.e2e.spawn_support import SpawnRun

BUDGET_RUN_LIMIT_S = 120.0
"""No run here comes near this (a stalled stream's retries take ~15 s); it bounds a hang."""


def stub_env(base: str, anthropic: str | None = None) -> dict[str, str]:
    """The model variables that point every model of a run (nested ones too) at the stub."""
    env = {"OPENAI_BASE_URL": base, "OPENAI_API_KEY": "stub-key"}
    if anthropic is not None:
        env.update(ANTHROPIC_BASE_URL=anthropic, ANTHROPIC_API_KEY="stub-key")
    return env


def with_prices(config: Path, prices: dict[str, Any]) -> None:
    """Add `"prices"` to the config's mcp.json."""
    path = config / "mcp.json"
    data = json.loads(path.read_text())
    data["prices"] = prices
    path.write_text(json.dumps(data))


def spawn_json(config: Path, *args: str, state: Path, env: dict[str, str], cwd: Path) -> SpawnRun:
    """`subagent spawn --json --config-dir CONFIG ARGS...` to its end."""
    proc = subprocess.run(
        cli_argv("spawn", "--json", "--config-dir", str(config), *args),
        capture_output=True,
        text=True,
        env=cli_env(state, env),
        cwd=cwd,
        timeout=BUDGET_RUN_LIMIT_S,
    )
    return SpawnRun(proc.returncode, parse_events(proc.stdout), proc.stderr)
