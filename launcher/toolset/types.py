"""Tool data shared by every room: a tool as announced, its registry entry, a call's result.

A leaf module like `config` and `events`: everyone may import it. Naming is in naming.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ToolResult:
    """What a tool call returned; `is_error` results are shown to the model as errors."""

    content: str
    is_error: bool = False
    structured: dict[str, Any] | None = None


ToolCaller = Callable[[dict[str, Any]], Awaitable[ToolResult]]
"""Runs one call of a tool with its arguments. Must not raise: failures are results."""


@dataclass(frozen=True)
class ToolDef:
    """A tool as its source announced it: original name, description, input schema.

    `problem` says why the tool can never be offered (e.g. an invalid input schema).
    """

    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    problem: str | None = None


@dataclass(frozen=True)
class ToolEntry:
    """A registered tool: exposed name, where it came from, and how to call it.

    `source` is `builtin`, `memory`, or the server name; `server` is the server name
    or None for built-in and memory tools. `problem` is copied from the ToolDef.
    """

    name: str
    source: str
    tool: str
    description: str
    input_schema: dict[str, Any]
    call: ToolCaller = field(compare=False, repr=False)
    problem: str | None = None

    @property
    def server(self) -> str | None:
        return None if self.source in ("builtin", "memory") else self.source
