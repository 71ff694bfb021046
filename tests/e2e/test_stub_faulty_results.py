"""The faulty stub's failing tools fail the way they promise, and the session survives."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import MCPError
from pydantic import ValidationError

from tests.e2e.stub_client import connect_stub, list_names, result_text

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


CALL_TIMEOUT_S = 10.0
HUGE_BYTES = 1_000_000
HANG_TIMEOUT_S = 0.5


async def test_faulty_tools_fail_as_announced(tmp_path: Path) -> None:
    args = ("--error-call", "--huge-result", str(HUGE_BYTES), "--invalid-schema", "--hang-on-call")
    async with connect_stub("faulty", *args, era="legacy", errlog=tmp_path / "err.log") as (
        client,
        _,
    ):
        with anyio.fail_after(CALL_TIMEOUT_S):
            names = await list_names(client)
            schemas = {t.name: t.input_schema for t in (await client.list_tools()).tools}
            with pytest.raises(MCPError) as rpc_error:
                await client.call_tool("fail")
            fail_result = await client.call_tool("fail_result")
            huge = await client.call_tool("huge")
            with pytest.raises(MCPError) as hang_error:
                await client.call_tool("hang", read_timeout_seconds=HANG_TIMEOUT_S)
            ok = await client.call_tool("ok")

    assert set(names) == {"ok", "fail", "fail_result", "huge", "bad_schema", "hang"}
    assert schemas["bad_schema"]["properties"]["value"] == {"type": 42}
    assert "JSON-RPC error" in str(rpc_error.value)
    assert fail_result.is_error is True
    assert len(result_text(huge)) == HUGE_BYTES
    assert hang_error.value.error.code == -32001  # the SDK's request timeout
    assert result_text(ok) == "ok"


async def test_wire_invalid_schema_reaches_client_and_sdk_rejects_listing(tmp_path: Path) -> None:
    async with connect_stub(
        "faulty", "--invalid-schema", "type", era="legacy", errlog=tmp_path / "err.log"
    ) as (client, _):
        with anyio.fail_after(CALL_TIMEOUT_S):
            with pytest.raises(ValidationError) as rejected:
                await client.list_tools(cache_mode="refresh")

    # The SDK client drops the whole listing, `ok` included, over one bad tool.
    assert "inputSchema.type" in str(rejected.value)
