"""serve starts its first spare worker before it loads the MCP SDK, so the two overlap.

A host's first spawn waits for both serve's SDK (~1.5 s) and a worker's start-up (~0.4 s);
started one after the other they add up. Checked in a fresh interpreter: when the spare pool
starts its first spare, no SDK module is loaded yet.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import RUN_LIMIT_S, Subagent

PROBE = """
import json, os, sys
from pathlib import Path
import launcher.backend.early as early
from launcher.backend.spare import SparePool
from launcher.cli.serve import run_serve

class Face:
    def __init__(self, answers):
        self.answers, self.note = answers, None
    def write(self, data):
        pass
    def start(self):
        pass

early.EarlyFace.on_stdio = classmethod(lambda cls, answers: Face(answers))

async def start_now(self):
    loaded = sorted(m for m in ("mcp", "mcp_types", "launcher.backend.server") if m in sys.modules)
    print(json.dumps(loaded), flush=True)
    os._exit(0)  # inside serve's task group a SystemExit would come out as a group

SparePool.start_now = start_now
run_serve(model=None, max_concurrent=1, task_ttl=60.0, config_dir=Path(sys.argv[1]),
          workspace=None, no_lock=True, scripted_dirs=[])
"""


def test_the_first_spare_starts_before_the_sdk_loads(tmp_path: Path, subagent: Subagent) -> None:
    config = tmp_path / "cfg"
    (config / "agents").mkdir(parents=True)
    (config / "mcp.json").write_text('{"mcpServers": {}}')
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(config)],
        capture_output=True,
        text=True,
        env=subagent.env(),
        cwd=tmp_path,
        timeout=RUN_LIMIT_S,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
