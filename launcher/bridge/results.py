"""Translate MCP results and SDK exceptions into ToolResults: the one place that does it."""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio
import mcp_types as types
from mcp import MCPError
from pydantic import ValidationError

from launcher.errors import SpawnError
from launcher.toolset.types import ToolResult

REQUEST_TIMEOUT = -32001
CONNECTION_CLOSED = -32000
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
CLOSED_ERRORS = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)


def _block_text(block: Any) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        kind = "image" if isinstance(block, types.ImageContent) else "audio"
        size = len(base64.b64decode(block.data, validate=False)) if block.data else 0
        return f"[{kind}: {block.mime_type}, {size} bytes, not shown]"
    if isinstance(block, types.EmbeddedResource):
        res = block.resource
        text = getattr(res, "text", None)
        if text is not None:
            return str(text)
        return f"[resource {res.uri}: {getattr(res, 'mime_type', None) or 'binary'}, not shown]"
    if isinstance(block, types.ResourceLink):
        return f"[resource link: {block.uri}]"
    return f"[{getattr(block, 'type', 'unknown')} content, not shown]"


def from_call_result(result: types.CallToolResult) -> ToolResult:
    """A server's CallToolResult as a ToolResult: text, structured content, media notes.

    Whole: the session cuts what the model is shown and keeps the rest (store/spill.py).
    """
    blocks, structured = result.content, result.structured_content
    if len(blocks) == 1 and type(blocks[0]) is types.TextContent:
        # The common reply, one text block, on every call's path: no list, no join.
        return ToolResult(blocks[0].text, bool(result.is_error), structured)
    parts = [_block_text(block) for block in blocks]
    if structured is not None and not any(isinstance(b, types.TextContent) for b in blocks):
        parts.append(json.dumps(structured, ensure_ascii=False))
    return ToolResult("\n".join(parts), bool(result.is_error), structured)


def from_exception(
    exc: BaseException,
    *,
    server: str,
    tool: str,
    timeout: float,
    connection_lost: bool = False,
) -> ToolResult:
    """Every way a call can fail, as an error result the model can read.

    `connection_lost` says whether the server went away: the SDK reports a closed
    connection with the same code (-32000) a server may use for its own errors.
    """
    lost_text = f"Server '{server}' is not reachable (it crashed or closed the connection)."
    if isinstance(exc, MCPError):
        code = exc.error.code
        message = exc.error.message
        if code == REQUEST_TIMEOUT:
            text = (
                f"Tool '{tool}' on server '{server}' timed out after {timeout:g} s "
                "(the request was cancelled)."
            )
        elif code == CONNECTION_CLOSED and connection_lost:
            text = lost_text
        elif code == INVALID_PARAMS:
            text = f"Invalid arguments for tool '{tool}': {message}"
        elif code == METHOD_NOT_FOUND:
            text = f"Server '{server}' does not know tool '{tool}': {message}"
        else:
            text = f"Server '{server}' returned an error for '{tool}' (code {code}): {message}"
    elif isinstance(exc, TimeoutError):
        text = (
            f"Tool '{tool}' on server '{server}' timed out after {timeout:g} s "
            "(the request was cancelled)."
        )
    elif isinstance(exc, ValidationError):
        text = (
            f"Server '{server}' sent an invalid result for '{tool}': {exc.error_count()} error(s)."
        )
    elif isinstance(exc, CLOSED_ERRORS):
        text = lost_text
    else:
        text = f"Calling '{tool}' on server '{server}' failed: {type(exc).__name__}: {exc}"
    return ToolResult(content=text, is_error=True)


def describe_startup_error(exc: BaseException) -> str:
    """A one-line reason for a failed connection, unwrapping task-group exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, SpawnError):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, MCPError):
        if exc.error.code == CONNECTION_CLOSED:
            return "the server closed the connection during start-up"
        return f"MCP error {exc.error.code}: {exc.error.message}"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if str(exc) else text
