"""A server of the 2026-07-28 era only, slower than the SDK's 10 s `server/discover` probe
to answer its first request (a cold start; the suite under load), still connects within
startup_timeout. The SDK's `auto` mode gives up on the probe after 10 s and falls back to a
headerless `initialize`, which such a server refuses with -32020 ("Missing
MCP-Protocol-Version header"): the connection must take that as the era's answer.

The server is the conformance suite's own 2026-07-28 `tools_call` mock; a loopback proxy
(conformance_slow_client.py) holds only its first discover answer, until the client has
given up on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_conformance import run_scenario

pytestmark = pytest.mark.e2e

SLOW_CLIENT = Path(__file__).with_name("conformance_slow_client.py")


def test_a_modern_only_server_slow_to_answer_discover_connects(tmp_path: Path) -> None:
    proc, checks = run_scenario(
        "tools_call", tmp_path / "results", SLOW_CLIENT, "--spec-version", "2026-07-28"
    )

    output = proc.stdout + proc.stderr
    report = output[-6000:]
    assert "-32020" not in output, report
    assert proc.returncode == 0, report
    assert "OVERALL: PASSED" in output, report
    statuses = {c["id"]: c["status"] for c in checks}
    assert statuses.get("tool-add-numbers") == "SUCCESS", report
