"""serve hands the SDK each tool's input schema by name, equal to what tools/list shows.

The SDK's 2026-07-28 HTTP transport checks a call's `Mcp-Param-*` headers against the called
tool's schema; given no lookup it runs the whole tools/list handler for every tools/call.
"""

from __future__ import annotations

from pathlib import Path

import anyio

from launcher.backend.pool import SubagentManager
from launcher.backend.server import SubagentServer
from tests.test_backend_early_equal import _config_dir, handshake, sdk_answers


async def _lookup(config_dir: Path, workspace: Path, names: list[str]) -> list[object]:
    async with anyio.create_task_group() as tg:
        manager = SubagentManager(
            tg,
            config_dir=config_dir,
            workspace=workspace,
            state_home=workspace / "state",
            default_model=None,
            max_concurrent=1,
            spare_workers=0,
        )
        app = SubagentServer(manager, config_dir, workspace)
        lookup = app.server.get_tool_input_schema
        assert lookup is not None, "the SDK would list every tool for each call"
        found = [lookup(name) for name in names]
        tg.cancel_scope.cancel()
    return found


def test_each_tools_input_schema_is_the_one_tools_list_shows(tmp_path: Path) -> None:
    config_dir = _config_dir(tmp_path)
    listed = anyio.run(sdk_answers, config_dir, tmp_path, handshake("2025-11-25"))[2]
    tools = listed["result"]["tools"]
    names = [tool["name"] for tool in tools]
    found = anyio.run(_lookup, config_dir, tmp_path, [*names, "no_such_tool"])
    assert found[:-1] == [tool["inputSchema"] for tool in tools]
    assert found[-1] is None
    assert "triage" in found[names.index("spawn_subagent")]["properties"]["agent"]["enum"]
