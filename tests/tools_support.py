"""Helpers shared by the built-in tool tests: build entries, call them synchronously."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from launcher.config.types import BUILTIN_TOOLS
from launcher.tools import builtin_entries
from launcher.toolset.types import ToolEntry, ToolResult


def tools(workspace: Path, **options: Any) -> dict[str, ToolEntry]:
    """Every built-in tool for `workspace`, by name."""
    return {e.name: e for e in builtin_entries(workspace, BUILTIN_TOOLS, **options)}


def call(entry: ToolEntry, **args: Any) -> ToolResult:
    """Run one tool call to completion on a fresh event loop."""
    return anyio.run(entry.call, args)


def run_tool(workspace: Path, name: str, **args: Any) -> ToolResult:
    """Call built-in `name` in `workspace` with default options."""
    return call(tools(workspace)[name], **args)
