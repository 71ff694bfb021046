"""A hook handler's `if`: one permission rule (`Bash(git push *)`, `Edit(*.ts)`) a call
must match for the handler to run.

As in Claude Code it is a best-effort filter that fails open: whatever cannot be read
for certain (a command with `$(...)` or backticks, a specifier of a form not read here)
runs the hook. A tool name that does not match never runs it. Bash rules are checked
against every subcommand (`npm test && git push`), leading `VAR=value` stripped; file
rules against the call's path (`*.ts` any file of that name, `src/**` under the project).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

_RULE = re.compile(r"^\s*([^()\s]+)\s*(?:\((.*)\))?\s*$", re.S)
_PARAM = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*?)\s*$", re.S)
_SPLIT = re.compile(r"\|\||&&|[;|&\n]")
_ASSIGNMENT = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+")
_SHELLS = ("Bash", "PowerShell")
_FILE_TOOLS = ("Read", "Write", "Edit", "MultiEdit", "NotebookEdit")
_PATH_FIELDS = ("file_path", "notebook_path", "path")


def condition_holds(rule: str | None, tool: str, tool_input: Any, project_dir: Path) -> bool:
    """Whether a call of `tool` with `tool_input` (Claude Code's shape) passes `rule`."""
    if not rule:
        return True
    match = _RULE.match(rule)
    if match is None:
        return True
    name, spec = match.group(1), match.group(2)
    if not _name_matches(name, tool):
        return False
    if spec is None or spec.strip() in ("", "*"):
        return True
    fields: Mapping[str, Any] = tool_input if isinstance(tool_input, dict) else {}
    if tool in _SHELLS and spec.rstrip().endswith(":*"):
        return _command_matches(spec.rstrip()[:-2] + " *", fields.get("command"))
    param = _PARAM.match(spec)
    if param is not None and param.group(1) in fields and param.group(1) not in _PATH_FIELDS:
        return fnmatchcase(_scalar(fields[param.group(1)]), param.group(2))
    if tool in _SHELLS:
        return _command_matches(spec, fields.get("command"))
    if tool in _FILE_TOOLS:
        path = next((fields[k] for k in _PATH_FIELDS if isinstance(fields.get(k), str)), None)
        return path is None or _path_matches(spec.strip(), path, project_dir)
    return True


def _name_matches(name: str, tool: str) -> bool:
    if name == tool or fnmatchcase(tool, name):
        return True
    # `mcp__server` names every tool of that server, as in a permission rule.
    return name.startswith("mcp__") and "__" not in name[5:] and tool.startswith(name + "__")


def _command_matches(pattern: str, command: object) -> bool:
    if not isinstance(command, str):
        return True
    if "$(" in command or "`" in command:
        return True  # a command inside a command cannot be read for certain: run the hook
    regex = _pattern(pattern.strip())
    for part in _SPLIT.split(command):
        part = _ASSIGNMENT.sub("", part.strip())
        if part and regex.fullmatch(part):
            return True
    return False


def _pattern(pattern: str) -> re.Pattern[str]:
    """A Bash rule: `*` is any text; a trailing ` *` also matches the bare command."""
    tail = ""
    if pattern.endswith(" *"):
        pattern, tail = pattern[:-2], r"(?: .*)?"
    return re.compile(".*".join(re.escape(piece) for piece in pattern.split("*")) + tail, re.S)


def _path_matches(pattern: str, path: str, project_dir: Path) -> bool:
    if "/" not in pattern:
        return fnmatchcase(os.path.basename(path), pattern)
    if pattern.startswith("//"):
        base, pattern = Path("/"), pattern[2:]
    elif pattern.startswith("~/"):
        base, pattern = Path.home(), pattern[2:]
    else:
        base, pattern = project_dir, pattern.removeprefix("./").lstrip("/")
    try:
        rel = Path(os.path.normpath(path)).relative_to(base).as_posix()
    except ValueError:
        return False
    return _glob(pattern).fullmatch(rel) is not None


def _glob(pattern: str) -> re.Pattern[str]:
    """Gitignore-style: `**` any depth, `*` and `?` within one path segment."""
    out = []
    for piece in re.split(r"(\*\*/?|\*|\?)", pattern):
        if piece.startswith("**"):
            out.append("(?:.*/)?" if piece.endswith("/") else ".*")
        elif piece == "*":
            out.append("[^/]*")
        elif piece == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(piece))
    return re.compile("".join(out))


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
