"""The official MCP conformance suite's client scenarios, run against our bridge.

`conformance client` starts a scenario server on loopback and runs
`conformance_client.py URL`, which talks to it through `McpConnection`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.real_servers import REPO, node22, npm_entry

pytestmark = pytest.mark.e2e

SUITE_TIMEOUT_S = 300.0
"""Bounds a hung scenario only: the client's SDK import plus a few round trips take
seconds idle, but a loaded 2-core machine stretched them past the suite's own 30 s."""
CLIENT_LIMIT_MS = int((SUITE_TIMEOUT_S - 30.0) * 1000)
"""The suite kills its client after `--timeout` ms (default 30 000, which `[sse-retry]` hit
under load): the client ends on its own (the condition), this only bounds a hang, and it
stays below SUITE_TIMEOUT_S so the suite still writes its checks and says what timed out."""
CLIENT = Path(__file__).with_name("conformance_client.py")

SCENARIOS: dict[str, set[str]] = {
    "initialize": {"mcp-client-initialization"},
    "tools_call": {"tool-add-numbers"},
    "elicitation-sep1034-client-defaults": {
        "client-elicitation-sep1034-string-default",
        "client-elicitation-sep1034-integer-default",
        "client-elicitation-sep1034-number-default",
        "client-elicitation-sep1034-enum-default",
        "client-elicitation-sep1034-boolean-default",
    },
    "sse-retry": {
        "client-sse-graceful-reconnect",
        "client-sse-retry-timing",
        "client-sse-last-event-id",
    },
}
"""Each scenario and the checks that must come out SUCCESS."""


def run_scenario(
    scenario: str, out_dir: Path, client: Path = CLIENT, *extra: str
) -> tuple[subprocess.CompletedProcess[str], Any]:
    """Run one client scenario with `client` (`extra`: more suite options, such as
    `--spec-version`); returns the suite's process and its checks.json."""
    node = node22()
    suite = npm_entry("@modelcontextprotocol/conformance")
    # The suite needs Node 22 (Node 20's fs lacks globSync); it and its children find it first.
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    command = f"{sys.executable} {client}"
    proc = subprocess.run(
        [
            str(node),
            str(suite),
            "client",
            "--command",
            command,
            "--scenario",
            scenario,
            "--timeout",
            str(CLIENT_LIMIT_MS),
            "--output-dir",
            str(out_dir),
            *extra,
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT_S,
        check=False,
    )
    found = sorted(out_dir.rglob("checks.json"))
    checks = json.loads(found[-1].read_text()) if found else []
    return proc, checks


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_conformance_client_scenario_passes(scenario: str, tmp_path: Path) -> None:
    proc, checks = run_scenario(scenario, tmp_path / "results")

    output = proc.stdout + proc.stderr  # the suite prints its summary on stderr
    report = output[-6000:]
    assert proc.returncode == 0, report
    assert "OVERALL: PASSED" in output, report
    statuses = {c["id"]: c["status"] for c in checks if c["id"] in SCENARIOS[scenario]}
    assert statuses == dict.fromkeys(SCENARIOS[scenario], "SUCCESS"), report
    assert not [c for c in checks if c["status"] == "FAILURE"], report
