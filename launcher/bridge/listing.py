"""One complete `tools/list`: every page, checked, turned into ToolDefs.

A tool with an input schema a model API would reject is kept with a `problem`, so the
registry shows it as muted instead of it silently disappearing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from launcher.bridge.schemas import ArgumentChecker, valid_schema
from launcher.errors import ProtocolError
from launcher.toolset.types import ToolDef

if TYPE_CHECKING:
    import mcp_types as types
    from mcp import Client

MAX_PAGES = 10_000
"""A server that keeps returning cursors past this many pages is broken, not big."""
INVALID_SCHEMA = "invalid input schema"
"""The muted reason of a tool whose input schema a model API would reject."""


async def list_all_tools(client: Client) -> list[types.Tool]:
    """Follow `next_cursor` to the end, bypassing the client's cache; a repeated cursor fails."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor, cache_mode="refresh")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
        if cursor in seen:
            raise ProtocolError(f"tools/list repeated cursor {cursor!r}")
        seen.add(cursor)
    return tools


def to_defs(tools: list[types.Tool]) -> tuple[list[ToolDef], list[str]]:
    """The listing as ToolDefs (schemas copied, each with its argument checker), and the
    names muted for a bad schema."""
    defs: list[ToolDef] = []
    skipped: list[str] = []
    for tool in tools:
        problem = None if valid_schema(tool.input_schema) else INVALID_SCHEMA
        if problem is not None:
            skipped.append(tool.name)
        schema = dict(tool.input_schema)
        check = ArgumentChecker(schema).error if problem is None else None
        defs.append(ToolDef(tool.name, tool.description or "", schema, problem, check))
    return defs, skipped
