"""What a worker imports: a scripted run loads no HTTP stack, and a lean spare (a batch of
scripted tasks) preloads none, while serve's spares still preload it for HTTP models."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import RUN_LIMIT_S, Subagent
from tests.e2e.test_cli_help_imports import _scripted_spawn_imports, _within

pytestmark = pytest.mark.e2e

HTTP_STACK = ("httpx2", "httpcore2", "truststore", "launcher.models.openai")
PRELOADED = (
    "import json, sys\n"
    "from launcher.backend import worker\n"
    "worker._preload(lean={lean})\n"
    "print(json.dumps(sorted(sys.modules)))\n"
)
"""A spare's preload in a fresh interpreter, then every module it holds."""


def _http(modules: set[str]) -> set[str]:
    return _within(modules, HTTP_STACK)


def _preloaded(subagent: Subagent, *, lean: bool) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-P", "-c", PRELOADED.format(lean=lean)],
        capture_output=True,
        text=True,
        env=subagent.env(),
        cwd=subagent.cwd,
        timeout=RUN_LIMIT_S,
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout))


def test_a_scripted_spawn_imports_no_http_stack(tmp_path: Path, subagent: Subagent) -> None:
    assert _http(_scripted_spawn_imports(tmp_path, subagent)) == set()


def test_a_lean_spare_preloads_the_session_but_no_http_stack(subagent: Subagent) -> None:
    modules = _preloaded(subagent, lean=True)
    assert {"launcher.assemble", "launcher.session", "launcher.agent"} <= modules
    assert {"launcher.models.scripted", "launcher.tools.sandbox.seccomp"} <= modules
    assert _http(modules) == set()
    assert "launcher.bridge.connection" not in modules


def test_a_full_spare_still_preloads_the_http_stack_and_the_bridge(subagent: Subagent) -> None:
    modules = _preloaded(subagent, lean=False)
    assert {"httpx2", "launcher.models.openai", "launcher.bridge.connection"} <= modules


WAITED_ON = (
    "import json, sys\n"
    "from launcher.backend import worker\n"
    "worker._preload(job_waiting=worker._stdin_ready)\n"
    "print(json.dumps(sorted(sys.modules)))\n"
)
"""A full spare's preload with its job already on stdin (a spawn that came at once)."""


def test_a_spare_whose_job_already_waits_leaves_the_http_stack_to_the_job(
    subagent: Subagent,
) -> None:
    proc = subprocess.run(
        [sys.executable, "-P", "-c", WAITED_ON],
        input='{"prompt": "go"}\n',
        capture_output=True,
        text=True,
        env=subagent.env(),
        cwd=subagent.cwd,
        timeout=RUN_LIMIT_S,
    )
    assert proc.returncode == 0, proc.stderr
    modules = set(json.loads(proc.stdout))
    assert {"launcher.assemble", "launcher.session", "launcher.agent"} <= modules
    assert "launcher.models.openai" not in modules
    assert "launcher.bridge.connection" not in modules
