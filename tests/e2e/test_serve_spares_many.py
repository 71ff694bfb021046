"""`serve --spares N`: N spare workers wait, spawns arriving together each take one, each
is replaced, never more than `--max-concurrent` wait, and all go with serve.

Spares are found from outside, as `ps` would: serve's children named `subagent-spare`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.conftest import assert_all_gone, wait_until
from tests.e2e.spare_support import is_spare, serve_pid, spares_of
from tests.e2e.spawn_support import write_config

pytestmark = pytest.mark.e2e

LIMIT_S = 180.0
"""Bounds each test: serve and several spares each pay their imports on 2 cores."""
UP_LIMIT_S = 120.0
"""How long N spares may take to be started and done importing, one a core, when loaded."""
QUICK = "steps:\n  - say: done quick\n"


def _params(tmp_path: Path, config: Path, *args: str) -> StdioServerParameters:
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state")}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher.cli", "serve", "--config-dir", str(config), *args],
        env=env,
        cwd=str(tmp_path),
    )


def _ready(parent: int, count: int) -> list[int]:
    """Wait until `parent` has `count` spares done importing and none importing; them."""
    assert wait_until(
        lambda: len(spares_of(parent, ready=True)) == count == len(spares_of(parent)),
        UP_LIMIT_S,
    ), f"spares of serve: {spares_of(parent)}, ready: {spares_of(parent, ready=True)}"
    return sorted(spares_of(parent, ready=True))


@pytest.mark.anyio
async def test_spawns_arriving_together_each_take_a_waiting_spare(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg", {})
    (tmp_path / "quick.yaml").write_text(QUICK)
    params = _params(tmp_path, config, "--spares", "3", "--max-concurrent", "3")
    results: list[str] = []
    with anyio.fail_after(LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S) as c:
            parent = serve_pid(config)
            assert parent is not None
            first = _ready(parent, 3)

            async def spawn() -> None:
                model = f"scripted:{tmp_path / 'quick.yaml'}"
                result = await c.call_tool("spawn_subagent", {"prompt": "go", "model": model})
                assert not result.is_error, result
                results.append(result.content[0].text)  # type: ignore[union-attr]

            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(spawn)
            assert results == ["done quick"] * 3
            # Each spawn took a waiting spare: none of the three waits any more ...
            assert not any(is_spare(pid) for pid in first)
            # ... and each was replaced.
            second = _ready(parent, 3)
            assert not set(first) & set(second)
    assert_all_gone([*first, *second], tmp_path)


@pytest.mark.anyio
async def test_no_more_spares_wait_than_sub_agents_may_run(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg", {})
    (tmp_path / "quick.yaml").write_text(QUICK)
    params = _params(tmp_path, config, "--spares", "5", "--max-concurrent", "2")
    with anyio.fail_after(LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S) as c:
            parent = serve_pid(config)
            assert parent is not None
            first = _ready(parent, 2)
            model = f"scripted:{tmp_path / 'quick.yaml'}"
            result = await c.call_tool("spawn_subagent", {"prompt": "go", "model": model})
            assert not result.is_error, result
            # Its replacement done importing, two wait again: never five.
            second = _ready(parent, 2)
            assert len(set(first) - set(second)) == 1
    assert_all_gone([*first, *second], tmp_path)
