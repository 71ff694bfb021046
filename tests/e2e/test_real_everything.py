"""npm server-everything (stdio, handshake era): its late tools reach the registry.

The server registers capability-dependent tools on `initialized` and then sends
list_changed; the registry must hold every tool it lists after that notice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e import real_servers as rs

pytestmark = pytest.mark.e2e

PACKAGE = "@modelcontextprotocol/server-everything"
NOTICE_TIMEOUT_S = 20.0
"""Node start-up plus the handshake on a loaded CI box; the notice follows at once."""
LATE_TOOL = "trigger-elicitation-request"
"""Registered only after `initialized`, because it depends on the client's capabilities."""


@pytest.fixture
def server() -> dict[str, Any]:
    return rs.npm_server(PACKAGE, "stdio")


async def tools_after_list_changed(server: dict[str, Any], errlog: Path) -> set[str]:
    """What the server lists, after its list_changed, to a client with the bridge's capabilities."""
    import mcp_types as types
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from launcher.bridge.elicitation import accept_with_defaults

    changed = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    params = StdioServerParameters(command=server["command"], args=server["args"])
    with errlog.open("a") as log, anyio.fail_after(NOTICE_TIMEOUT_S):
        async with Client(
            stdio_client(params, errlog=log),
            message_handler=on_message,
            elicitation_callback=accept_with_defaults,
        ) as client:
            await changed.wait()
            names: set[str] = set()
            cursor: str | None = None
            while True:
                page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                names.update(tool.name for tool in page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    return names


@pytest.mark.anyio
async def test_every_tool_listed_after_list_changed_is_registered(
    server: dict[str, Any], tmp_path: Path
) -> None:
    expected = await tools_after_list_changed(server, tmp_path / "truth.log")
    config_dir = rs.write_config(tmp_path / "config", {"everything": server})

    listing = await anyio.to_thread.run_sync(
        lambda: rs.tools_json(config_dir, "everything", tmp_path=tmp_path, settle=0.5)
    )

    assert LATE_TOOL in expected
    assert listing["servers"]["everything"]["state"] == "connected"
    assert set(rs.server_tools(listing, "everything")) == expected


def test_echo_and_structured_content_through_a_spawn(
    server: dict[str, Any], tmp_path: Path
) -> None:
    config_dir = rs.write_config(tmp_path / "config", {"everything": server})
    calls = [
        {"tool": "everything__echo", "args": {"message": "hello interop"}},
        {"tool": "everything__get-structured-content", "args": {"location": "Chicago"}},
    ]

    events = rs.spawn_events(config_dir, "everything", calls, tmp_path=tmp_path)

    results = rs.tool_results(events)
    echo, weather = results["everything__echo"], results["everything__get-structured-content"]
    assert echo["is_error"] is False
    assert "hello interop" in echo["content"]
    assert weather["is_error"] is False
    assert set(json.loads(weather["content"])) == {"temperature", "conditions", "humidity"}
    protocol = rs.connected_protocol(events, "everything")
    assert protocol is not None and protocol < rs.MODERN_PROTOCOL  # the handshake era
