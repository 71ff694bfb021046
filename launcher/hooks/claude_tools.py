"""A built-in call as Claude Code's hooks see it, and a hook's `updatedInput` back as ours.

Hook scripts read Claude Code's tool inputs (`.tool_input.file_path`, absolute;
`.tool_input.old_string`; Bash's `timeout` in milliseconds), so a built-in's arguments
are shown to them in those shapes, and an `updatedInput` is read back from them. Fields
Claude Code has and we do not (`description`, `run_in_background`,
`dangerouslyDisableSandbox`) are dropped: a hook rewrites a call, it never widens one.
An MCP tool's arguments are the same in both worlds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_RENAMES: Mapping[str, Mapping[str, str]] = {
    "read": {"path": "file_path"},
    "write": {"path": "file_path"},
    "edit": {"path": "file_path", "old": "old_string", "new": "new_string"},
    "grep": {"ignore_case": "-i"},
}
"""Our argument -> Claude Code's, per built-in (the rest keep their names)."""
_PATHS = frozenset({"file_path", "path"})
"""Claude Code's path fields: absolute in what hooks see."""
_DROPPED: Mapping[str, frozenset[str]] = {
    "bash": frozenset({"description", "run_in_background", "dangerouslyDisableSandbox"}),
    "grep": frozenset({"output_mode", "-n", "-A", "-B", "-C", "head_limit", "multiline", "type"}),
    "ls": frozenset({"ignore"}),
}
"""Claude Code's fields with no counterpart here, dropped from an `updatedInput`."""
MS_PER_S = 1000


def hook_input(tool: str, builtin: bool, arguments: Mapping[str, Any], workspace: Path) -> Any:
    """`arguments` of a call as Claude Code's `tool_input` (a built-in's in its shapes)."""
    if not builtin:
        return dict(arguments)
    renames = _RENAMES.get(tool, {})
    shown: dict[str, Any] = {}
    for key, value in arguments.items():
        theirs = renames.get(key, key)
        if theirs in _PATHS and isinstance(value, str) and tool != "bash":
            value = os.path.normpath(os.path.join(workspace, value))
        shown[theirs] = value
    if tool == "bash" and isinstance(shown.get("timeout"), int | float):
        shown["timeout"] = int(shown["timeout"] * MS_PER_S)
    return shown


def call_arguments(
    tool: str, builtin: bool, updated: Mapping[str, Any], workspace: Path
) -> dict[str, Any]:
    """A hook's `updatedInput` as our arguments (checked against the schema afterwards)."""
    if not builtin:
        return dict(updated)
    ours = {theirs: mine for mine, theirs in _RENAMES.get(tool, {}).items()}
    dropped = _DROPPED.get(tool, frozenset())
    arguments: dict[str, Any] = {}
    for key, value in updated.items():
        if key in dropped:
            continue
        mine = ours.get(key, key)
        if key in _PATHS and isinstance(value, str):
            value = _relative(value, workspace)
        arguments[mine] = value
    if tool == "bash" and isinstance(arguments.get("timeout"), int | float):
        arguments["timeout"] = arguments["timeout"] / MS_PER_S
    return arguments


def hook_response(
    tool: str, builtin: bool, arguments: Mapping[str, Any], content: str, workspace: Path
) -> Any:
    """A successful call's result as PostToolUse's `tool_response` (Claude Code's shapes)."""
    if not builtin:
        return [{"type": "text", "text": content}]
    shown = hook_input(tool, builtin, arguments, workspace)
    if tool == "bash":
        return {"stdout": content, "stderr": "", "interrupted": False, "isImage": False}
    if tool in ("write", "edit"):
        return {"filePath": shown.get("file_path"), "success": True}
    if tool == "read":
        return {"type": "text", "file": {"filePath": shown.get("file_path"), "content": content}}
    return content


def output_text(value: object) -> str | None:
    """A hook's `updatedToolOutput` as result text; None for a shape that has none."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("stdout"), str):
        stdout: str = value["stdout"]
        stderr = value.get("stderr")
        return stdout + (stderr if isinstance(stderr, str) else "")
    if isinstance(value, list) and all(isinstance(block, dict) for block in value):
        texts = [block.get("text") for block in value if block.get("type") == "text"]
        return "\n".join(t for t in texts if isinstance(t, str))
    return None


def _relative(path: str, workspace: Path) -> str:
    """An absolute path inside the workspace as a relative one; any other path as given
    (the file tools refuse it if it leaves the workspace)."""
    given = Path(path)
    if given.is_absolute() and Path(os.path.normpath(given)).is_relative_to(workspace):
        return Path(os.path.normpath(given)).relative_to(workspace).as_posix() or "."
    return path
