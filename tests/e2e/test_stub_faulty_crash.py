"""`faulty --crash-at-start` / `--crash-on-call`: the client sees errors, not a hang."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import MCPError

from tests.e2e.conftest import parse_events
from tests.e2e.stub_client import connect_stub, result_text

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


CRASH_TIMEOUT_S = 15.0


def _mcp_errors(exc: BaseException) -> list[MCPError]:
    """Every MCPError in an exception tree (the SDK wraps them in ExceptionGroups)."""
    if isinstance(exc, MCPError):
        return [exc]
    if isinstance(exc, BaseExceptionGroup):
        return [e for sub in exc.exceptions for e in _mcp_errors(sub)]
    return []


async def test_crash_at_start_fails_the_connect(tmp_path: Path) -> None:
    marker, errlog = tmp_path / "marker", tmp_path / "err.log"
    caught: BaseException | None = None
    with anyio.fail_after(CRASH_TIMEOUT_S):
        try:
            async with connect_stub(
                "faulty", "--crash-at-start", "--marker", str(marker), era="legacy", errlog=errlog
            ):
                pass
        except Exception as exc:
            caught = exc

    assert caught is not None
    assert [e.error.code for e in _mcp_errors(caught)] == [-32000]
    assert marker.exists()
    assert "crashing at start" in errlog.read_text()


async def test_crash_on_call_fails_that_call_and_later_ones(tmp_path: Path) -> None:
    call_log = tmp_path / "calls.jsonl"
    args = ("--crash-on-call", "--call-log", str(call_log))
    async with connect_stub("faulty", *args, era="legacy", errlog=tmp_path / "err.log") as (
        client,
        _,
    ):
        with anyio.fail_after(CRASH_TIMEOUT_S):
            ok = await client.call_tool("ok")
            with pytest.raises(MCPError) as during:
                await client.call_tool("crash")
            with pytest.raises(MCPError) as after:
                await client.call_tool("ok")

    assert result_text(ok) == "ok"
    assert during.value.error.code == after.value.error.code == -32000
    logged = [e["tool"] for e in parse_events(call_log.read_text())]
    assert logged == ["ok", "crash"]
