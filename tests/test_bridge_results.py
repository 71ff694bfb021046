"""MCP results and SDK errors become ToolResults the model can read, whole (the session cuts)."""

from __future__ import annotations

import base64

import anyio
import mcp_types as types
from mcp import MCPError

from launcher.bridge.results import describe_startup_error, from_call_result
from launcher.bridge.results import from_exception as _from_exception


def from_exception(exc: BaseException, lost: bool = False) -> tuple[bool, str]:
    result = _from_exception(exc, server="gh", tool="list", timeout=2.5, connection_lost=lost)
    return result.is_error, result.content


def test_text_structured_and_image_blocks_are_kept() -> None:
    png = base64.b64encode(b"\x89PNG" + b"\0" * 96).decode()
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="two issues"),
            types.ImageContent(type="image", data=png, mime_type="image/png"),
        ],
        structured_content={"count": 2},
    )

    out = from_call_result(result)

    assert out.content == "two issues\n[image: image/png, 100 bytes, not shown]"
    assert out.structured == {"count": 2}
    assert out.is_error is False


def test_structured_only_result_is_shown_as_json_and_errors_stay_errors() -> None:
    result = types.CallToolResult(content=[], structured_content={"ok": False}, is_error=True)

    out = from_call_result(result)

    assert (out.content, out.is_error) == ('{"ok": false}', True)


def test_a_large_result_is_returned_whole() -> None:
    text = "é" * 100_000
    result = types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    assert from_call_result(result).content == text


def test_every_call_failure_has_a_clear_message() -> None:
    def rpc(code: int, message: str) -> MCPError:
        return MCPError(code=code, message=message)

    assert from_exception(rpc(-32001, "Request 'tools/call' timed out")) == (
        True,
        "Tool 'list' on server 'gh' timed out after 2.5 s (the request was cancelled).",
    )
    crashed = (True, "Server 'gh' is not reachable (it crashed or closed the connection).")
    assert from_exception(rpc(-32000, "Connection closed"), lost=True) == crashed
    assert from_exception(anyio.ClosedResourceError()) == crashed
    # The same code from a live server is that server's own error, with its message.
    assert from_exception(rpc(-32000, "rate limited")) == (
        True,
        "Server 'gh' returned an error for 'list' (code -32000): rate limited",
    )
    assert from_exception(rpc(-32602, "missing 'repo'")) == (
        True,
        "Invalid arguments for tool 'list': missing 'repo'",
    )
    assert from_exception(ValueError("boom")) == (
        True,
        "Calling 'list' on server 'gh' failed: ValueError: boom",
    )


def test_startup_errors_unwrap_exception_groups() -> None:
    group = ExceptionGroup("tg", [MCPError(code=-32000, message="Connection closed")])

    assert describe_startup_error(group) == "the server closed the connection during start-up"
    missing = FileNotFoundError(2, "No such file", "/opt/nothing")
    assert describe_startup_error(missing) == "command not found: /opt/nothing"
