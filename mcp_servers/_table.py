"""A live, ordered tool table with cursor paging; plain data, no SDK."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolOutput:
    """What a stub tool returns: text, optional structured content, error flag."""

    text: str
    structured: dict[str, Any] | None = None
    is_error: bool = False


class ToolRpcError(Exception):
    """Raised by a tool handler to answer with a JSON-RPC error instead of a result."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


ToolHandler = Callable[[dict[str, Any]], Awaitable[ToolOutput]]

OPEN_OBJECT_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": True}


@dataclass(frozen=True)
class ToolSpec:
    """One tool as announced (name, description, JSON input schema) plus its handler.

    `wire_input_schema`, when set, replaces `input_schema` on the wire after the SDK's
    own result validation, to imitate servers that announce schemas the SDK rejects.
    """

    name: str
    description: str
    handler: ToolHandler
    input_schema: dict[str, Any] = field(default_factory=lambda: dict(OPEN_OBJECT_SCHEMA))
    wire_input_schema: dict[str, Any] | None = None


class BadCursorError(ValueError):
    """A tools/list cursor this table did not hand out."""


class ToolTable:
    """Tools in announcement order; adding or removing does not notify (the server does)."""

    def __init__(self, tools: list[ToolSpec] | None = None) -> None:
        self._tools: dict[str, ToolSpec] = {}
        for tool in tools or []:
            self.add(tool)

    def add(self, tool: ToolSpec) -> None:
        """Register or replace a tool."""
        self._tools[tool.name] = tool

    def remove(self, name: str) -> bool:
        """Drop a tool; returns whether it was there."""
        return self._tools.pop(name, None) is not None

    def get(self, name: str) -> ToolSpec | None:
        """The tool named `name`, if registered."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """Registered tool names in announcement order."""
        return list(self._tools)

    def page(self, cursor: str | None, size: int) -> tuple[list[ToolSpec], str | None]:
        """One page of tools and the cursor of the next (None at the end); size 0 = everything."""
        tools = list(self._tools.values())
        try:
            start = int(cursor) if cursor else 0
        except ValueError as exc:
            raise BadCursorError(f"invalid cursor {cursor!r}") from exc
        if start < 0 or start > len(tools):
            raise BadCursorError(f"invalid cursor {cursor!r}")
        if size <= 0:
            return tools[start:], None
        end = start + size
        return tools[start:end], (str(end) if end < len(tools) else None)
