"""A tool call goes straight through the SDK session when its answer is a plain result, and
through `mcp.Client`'s own layers (input-required rounds) when it is not: real stub servers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp
import pytest

from launcher.bridge.connection import McpConnection
from launcher.config.types import ServerSpec
from launcher.events import Event
from launcher.toolset.types import ToolDef, ToolResult

REPO = Path(__file__).resolve().parents[2]
FAST_STUB = REPO / "bench" / "fast_stub.py"
LIMIT_S = 120.0
"""Bounds a hung connect or call only."""


async def call_once(
    tmp_path: Path, args: tuple[str, ...], tool: str, arguments: dict[str, Any]
) -> tuple[str | None, ToolResult]:
    """Connect to a stdio stub, call `tool` once; the era spoken and the result."""

    async def no_event(event: Event) -> None:
        return None

    async def no_tools(defs: list[ToolDef]) -> None:
        return None

    spec = ServerSpec(name="s", command=sys.executable, args=args, cwd=str(REPO))
    conn = McpConnection(
        spec, on_tools=no_tools, emit=no_event, log_path=tmp_path / "s.log", workspace=tmp_path
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(conn.run)
        try:
            with anyio.fail_after(LIMIT_S):
                await conn.ready.wait()
                assert conn.state == "connected", conn.error
                result = await conn.call(tool, arguments)
        finally:
            conn.close()
    return conn.protocol_version, result


@pytest.fixture
def client_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tools called through `mcp.Client.call_tool` (it still calls, and is counted)."""
    calls: list[str] = []
    original = mcp.Client.call_tool

    async def counted(self: mcp.Client, name: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(name)
        return await original(self, name, *args, **kwargs)

    monkeypatch.setattr(mcp.Client, "call_tool", counted)
    return calls


@pytest.mark.parametrize(
    "args",
    [("-S", str(FAST_STUB)), ("-m", "mcp_servers.lazy")],
    ids=["handshake era", "2026-07-28"],
)
def test_a_plain_result_comes_straight_from_the_session(
    tmp_path: Path, client_calls: list[str], args: tuple[str, ...]
) -> None:
    _, result = anyio.run(call_once, tmp_path, args, "echo", {"text": "hi"})
    assert not result.is_error and "hi" in result.content, result
    assert client_calls == []


def test_a_server_that_wants_input_is_answered_through_the_clients_rounds(
    tmp_path: Path, client_calls: list[str]
) -> None:
    era, result = anyio.run(
        call_once, tmp_path, ("-m", "mcp_servers.asker"), "ask", {"question": "colour?"}
    )
    assert era == "2026-07-28"  # the era whose servers answer `input_required`
    # The bridge answers elicitations with the schema's defaults, in every era.
    assert (result.content, result.is_error) == ("answer: (default)", False)
    assert client_calls == ["ask"]
