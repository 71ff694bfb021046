"""The official conformance suite's SERVER scenarios against `serve --http`.

One serve for the module (loopback, no token: the suite's probes carry none); each
scenario runs at every protocol version it applies to that serve speaks, with
conformance_server_baseline.yml as `--expected-failures`: a check fails the run unless it
is listed there (each entry says why), and a listed check that passes fails it too.
Only scenarios and checks that do not call the suite's own fixture tools, resources or
prompts are expected to pass: serve's tools are its own.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.real_servers import REPO, node22, npm_entry
from tests.e2e.serve_http_support import HttpServe, http_serve

pytestmark = pytest.mark.e2e

BASELINE = Path(__file__).with_name("conformance_server_baseline.yml")
SCENARIO_LIMIT_S = 180.0
"""Bounds one scenario run; each takes seconds idle (its probes are a few requests)."""
SUITE_LIMIT_MS = int((SCENARIO_LIMIT_S - 30.0) * 1000)
"""The suite's own per-scenario timeout, below ours so it still writes its checks."""
SCENARIOS = [
    ("tools-list", "2025-11-25"),
    ("tools-list", "2026-07-28"),
    ("server-sse-multiple-streams", "2025-11-25"),
    ("server-sse-multiple-streams", "2026-07-28"),
    ("dns-rebinding-protection", "2025-11-25"),
    ("dns-rebinding-protection", "2026-07-28"),
    ("server-stateless", "2026-07-28"),
    ("caching", "2026-07-28"),
    ("http-header-validation", "2026-07-28"),
    ("tasks-capability-negotiation", None),
    ("tasks-dispatch-and-envelope", None),
]
"""(scenario, spec version; None: the extension scenarios' own)."""


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServe]:
    with http_serve(tmp_path_factory.mktemp("serve")) as running:
        yield running


def run_server_scenario(url: str, scenario: str, version: str | None, out: Path) -> Any:
    """(the suite's process, its checks) for one scenario against `url`."""
    node = node22()
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv = [str(node), str(npm_entry("@modelcontextprotocol/conformance")), "server"]
    argv += ["--url", url, "--scenario", scenario, "--output-dir", str(out)]
    argv += ["--expected-failures", str(BASELINE), "--timeout", str(SUITE_LIMIT_MS)]
    if version is not None:
        argv += ["--spec-version", version]
    proc = subprocess.run(
        argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=SCENARIO_LIMIT_S
    )
    found = sorted(out.rglob("checks.json"))
    return proc, json.loads(found[-1].read_text()) if found else []


@pytest.mark.parametrize(("scenario", "version"), SCENARIOS, ids=lambda v: str(v))
def test_conformance_server_scenario_passes_but_for_its_baseline(
    serve: HttpServe, scenario: str, version: str | None, tmp_path: Path
) -> None:
    proc, checks = run_server_scenario(serve.url, scenario, version, tmp_path / "results")
    report = (proc.stdout + proc.stderr)[-6000:]
    assert checks, report
    assert proc.returncode == 0, report
    baselined = {
        line.strip().removeprefix("- ").split(":", 1)[1]
        for line in BASELINE.read_text().splitlines()
        if line.strip().startswith(f"- {scenario}:")
    }
    failing = {c["id"] for c in checks if c["status"] in ("FAILURE", "WARNING")}
    assert failing <= baselined, report
    assert any(c["status"] == "SUCCESS" for c in checks), report
