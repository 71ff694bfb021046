"""`sdk.call_tool` goes straight through the session for a plain result; a refusal with
`HEADER_MISMATCH` (the tool's listing is stale) is left to `mcp.Client`'s recovery, and
no other error is sent twice."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from mcp import MCPError
from mcp_types.jsonrpc import HEADER_MISMATCH, INTERNAL_ERROR

from launcher.bridge.sdk import call_tool

pytestmark = pytest.mark.anyio

PLAIN = types.CallToolResult(content=[types.TextContent(type="text", text="ok")])


class Session:
    """The SDK session's `call_tool`, answering with `answer` (raised if an exception)."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.sent: list[dict[str, Any]] = []

    async def call_tool(self, name: str, arguments: dict[str, Any], **options: Any) -> Any:
        self.sent.append({"name": name, **options})
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


class Client:
    """`mcp.Client` as `call_tool` uses it: its session, and its own `call_tool`."""

    def __init__(self, answer: Any) -> None:
        self.session = Session(answer)
        self.calls: list[tuple[str, float | None]] = []

    async def call_tool(
        self, name: str, arguments: dict[str, Any], read_timeout_seconds: float | None = None
    ) -> types.CallToolResult:
        self.calls.append((name, read_timeout_seconds))
        return PLAIN


async def test_a_plain_result_is_the_sessions_sent_as_the_client_sends_it() -> None:
    client = Client(PLAIN)
    assert await call_tool(client, "t", {}, read_timeout_seconds=7.0) is PLAIN  # type: ignore[arg-type]
    assert client.calls == []
    assert client.session.sent == [
        {
            "name": "t",
            "read_timeout_seconds": 7.0,
            "allow_input_required": True,
            "allow_claimed": True,
        }
    ]


async def test_a_header_mismatch_goes_to_the_clients_recovery() -> None:
    client = Client(MCPError(HEADER_MISMATCH, "stale listing"))
    assert await call_tool(client, "t", {}, read_timeout_seconds=7.0) is PLAIN  # type: ignore[arg-type]
    assert client.calls == [("t", 7.0)]


async def test_an_input_required_answer_goes_to_the_clients_rounds() -> None:
    asked = types.InputRequiredResult(request_state="s")
    client = Client(asked)
    assert await call_tool(client, "t", {}, read_timeout_seconds=7.0) is PLAIN  # type: ignore[arg-type]
    assert client.calls == [("t", 7.0)]


async def test_any_other_error_is_raised_without_a_second_send() -> None:
    client = Client(MCPError(INTERNAL_ERROR, "tool broke"))
    with pytest.raises(MCPError):
        await call_tool(client, "t", {}, read_timeout_seconds=7.0)  # type: ignore[arg-type]
    assert client.calls == []
    assert len(client.session.sent) == 1
