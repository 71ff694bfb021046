"""What a process imports: a plain `spawn` loads no part of serve's MCP face, and serve's early
face (everything before its first answer) loads neither the SDK nor typer nor pydantic."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent
from tests.e2e.test_cli_help_imports import _scripted_spawn_imports, _within

pytestmark = pytest.mark.e2e

SERVE_FACE = ("launcher.backend.server", "launcher.backend.tasks", "launcher.backend.early")
SERVE_FACE += ("launcher.backend.handover", "mcp.server")
SERVE_FACE += ("launcher.backend.pool", "launcher.backend.spare", "launcher.backend.worker")
"""serve's face and its worker pool: a plain spawn loads the pool only when it delegates."""
HEAVY = ("mcp", "mcp_types", "pydantic", "typer", "click", "anyio", "httpx", "rich")
EARLY_PATH = (
    "from launcher.cli.entry import main\n"
    "from launcher.cli.serve import parse_fast, run_serve\n"
    "from launcher.cli.loading import load\n"
    "from launcher.config.discovery import load_config\n"
    "from launcher.backend.early import EarlyAnswers, EarlyFace\n"
    "from launcher.backend.first_call import FirstCalls\n"
)
"""Everything `subagent serve` imports before its early face answers (cli/serve.py, run_serve)."""


def test_a_plain_spawn_imports_nothing_of_serves_face(tmp_path: Path, subagent: Subagent) -> None:
    assert _within(_scripted_spawn_imports(tmp_path, subagent), SERVE_FACE) == set()


def test_serves_early_face_imports_nothing_heavy() -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", EARLY_PATH],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "launcher.backend.early" in modules
    assert _within(modules, HEAVY) == set()
