"""A `sitecustomize.py` the model writes into the workspace never runs in serve's workers,
also when serve's PYTHONPATH has an empty entry (`export PYTHONPATH=$PYTHONPATH:/dir` with
the variable unset), which Python reads as the directory a worker starts in: the workspace.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.conftest import wait_until, write_config
from tests.e2e.spare_support import serve_pid, spares_of

pytestmark = pytest.mark.e2e

LIMIT_S = 180.0
"""Bounds the test: serve and three spares each pay their imports on 2 cores."""
UP_LIMIT_S = 120.0


def _one_ready_spare(parent: int, not_: set[int]) -> int:
    def found() -> list[int]:
        return [pid for pid in spares_of(parent, ready=True) if pid not in not_]

    assert wait_until(lambda: len(found()) == 1, UP_LIMIT_S), spares_of(parent)
    return found()[0]


@pytest.mark.anyio
async def test_a_planted_sitecustomize_does_not_run_in_a_later_worker(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    marker = tmp_path / "planted-code-ran"
    plant = f"open({str(marker)!r}, 'a').write('ran')"
    command = f"printf %s {json.dumps(plant)} > sitecustomize.py"
    call = {"tool": "bash", "args": {"command": command}}
    steps = [{"call": [call]}, {"say": "planted"}]
    (tmp_path / "plant.json").write_text(json.dumps({"steps": steps}))
    (tmp_path / "quick.json").write_text(json.dumps({"steps": [{"say": "done"}]}))
    config = write_config(tmp_path / "cfg", {})
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state")}
    env["PYTHONPATH"] = os.pathsep + str(tmp_path / "nonexistent")
    env.pop("SUBAGENT_CONFIG_DIR", None)
    argv = ["-m", "launcher.cli", "serve", "--config-dir", str(config)]
    argv += ["--workspace", str(workspace), "--scripted-dir", str(tmp_path)]
    params = StdioServerParameters(command=sys.executable, args=argv, env=env, cwd=str(tmp_path))
    with anyio.fail_after(LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S) as c:
            parent = serve_pid(config)
            assert parent is not None

            async def spawn(script: str) -> str:
                args = {"prompt": "go", "model": f"scripted:{tmp_path / script}"}
                result = await c.call_tool("spawn_subagent", args)
                assert not result.is_error, result
                return str(result.content[0].text)  # type: ignore[union-attr]

            first = _one_ready_spare(parent, set())
            assert await spawn("plant.json") == "planted"
            assert (workspace / "sitecustomize.py").read_text() == plant
            # The spare started while the first run ran may predate the file: run on it,
            # so the next one surely starts after the file was there.
            second = _one_ready_spare(parent, {first})
            assert await spawn("quick.json") == "done"
            third = _one_ready_spare(parent, {first, second})
            assert await spawn("quick.json") == "done"
            assert third not in spares_of(parent)
    assert not marker.exists(), "the model's sitecustomize.py ran in a worker"
