"""Registry entries of the built-in tools: names, descriptions, input schemas, callers."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launcher.config.types import BUILTIN_TOOLS
from launcher.errors import ToolError
from launcher.tools.bash import MAX_BASH_TIMEOUT_S, GroupGuard, run_bash
from launcher.tools.common import get_float, get_str, in_thread, safe_caller
from launcher.tools.files import edit_file, read_file, write_file
from launcher.tools.search import find_paths, grep_files, list_dir
from launcher.tools.workspace import Workspace
from launcher.toolset.types import ToolCaller, ToolEntry, ToolResult

if TYPE_CHECKING:
    from launcher.tools.sandbox import ShellSandbox

FileTool = Callable[[Workspace, dict[str, Any], int], ToolResult]


def _schema(required: list[str], **props: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


_PATH = {"type": "string", "description": "Path relative to the workspace root."}

_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "read": (
        "Read a text file. Returns its lines numbered from 1 (line number, tab, text). "
        "Use offset/limit for long files; binary and very large files are refused. "
        "Also reads, by the full path given, a tool result that was too large to show.",
        _schema(
            ["path"],
            path=_PATH,
            offset={"type": "integer", "minimum": 1, "description": "First line (1-based)."},
            limit={"type": "integer", "minimum": 1, "description": "Lines to return (2000)."},
        ),
    ),
    "write": (
        "Create or overwrite a file with the given content; parent directories are created.",
        _schema(["path", "content"], path=_PATH, content={"type": "string"}),
    ),
    "edit": (
        "Replace an exact string in a file. 'old' must occur exactly once (include enough "
        "surrounding context) unless replace_all is true; the call fails if it is absent.",
        _schema(
            ["path", "old", "new"],
            path=_PATH,
            old={"type": "string", "description": "Exact text to find, whitespace included."},
            new={"type": "string", "description": "Replacement text."},
            replace_all={"type": "boolean", "default": False},
        ),
    ),
    "bash": (
        "Run a bash command with the workspace as working directory; stdout and stderr are "
        "returned together. A non-zero exit is an error. Background processes are killed "
        "when the command ends.",
        _schema(
            ["command"],
            command={"type": "string"},
            timeout={
                "type": "number",
                "description": f"Seconds before it is killed (max {MAX_BASH_TIMEOUT_S:g}).",
            },
        ),
    ),
    "grep": (
        "Search file contents with a regular expression (RE2 syntax: no backreferences or "
        "lookaround). Prints path:line:text for each matching line; skips binary files "
        "and .git.",
        _schema(
            ["pattern"],
            pattern={"type": "string", "description": "Regular expression."},
            path={"type": "string", "description": "File or directory to search (default '.')."},
            glob={"type": "string", "description": "Only files matching this glob, e.g. '*.py'."},
            ignore_case={"type": "boolean", "default": False},
        ),
    ),
    "find": (
        "Find files and directories by glob. A pattern without '/' matches names at any "
        "depth ('*.py'); with '/' it matches the relative path ('src/**/test_*.py').",
        _schema(
            ["pattern"],
            pattern={"type": "string"},
            path={"type": "string", "description": "Directory to search (default '.')."},
        ),
    ),
    "ls": (
        "List a directory's entries; directories end in '/', symlinks in '@'.",
        _schema([], path={"type": "string", "description": "Directory (default '.')."}),
    ),
}

_SANDBOXED_NOTE = (
    " It runs sandboxed: it writes only in the workspace and $TMPDIR, has no network, and "
    "cannot read credential files."
)
_ONLINE_NOTE = (
    " It runs sandboxed: it writes only in the workspace and $TMPDIR and cannot read "
    "credential files."
)
"""Told to the model, so a refused write or connection is not a puzzle to it."""

_FILE_TOOLS: dict[str, FileTool] = {
    "read": read_file,
    "write": write_file,
    "edit": edit_file,
    "grep": grep_files,
    "find": find_paths,
    "ls": list_dir,
}


def builtin_entries(
    workspace: Path,
    names: Iterable[str],
    *,
    bash_timeout: float = 120.0,
    output_cap: int = 64 * 1024,
    group_guard: GroupGuard | None = None,
    results: Path | None = None,
    sandbox: ShellSandbox | None = None,
) -> list[ToolEntry]:
    """Entries for the requested built-ins, in BUILTIN_TOOLS order.

    `group_guard` (the session's watchdog) keeps bash's process groups from outliving
    a launcher that is killed mid-call. `results` (the session's saved oversized
    results) is a directory `read`, and only `read`, may also read. `sandbox` confines
    the processes bash starts.

    Unknown names raise ValueError (config validation should have caught them).
    """
    wanted = set(names)
    unknown = wanted - set(BUILTIN_TOOLS)
    if unknown:
        raise ValueError(f"unknown built-in tools: {', '.join(sorted(unknown))}")
    from launcher.trust import protected_set

    # The sandbox's set is the session's, taken when it started; without one, now.
    protected = sandbox.guard.protected if sandbox is not None else protected_set(workspace)
    ws = Workspace(workspace, protected)
    entries = []
    for name in BUILTIN_TOOLS:
        if name not in wanted:
            continue
        description, schema = _SPECS[name]
        if name == "bash" and sandbox is not None and sandbox.confined:
            description += _SANDBOXED_NOTE if not sandbox.settings.network else _ONLINE_NOTE
        if name == "bash":
            call = _bash_caller(ws, bash_timeout, output_cap, group_guard, sandbox)
        elif name == "read" and results is not None:
            also = Workspace(results)
            run = partial(read_file, also=also)
            call = _file_caller(name, run, ws, output_cap)
        else:
            call = _file_caller(name, _FILE_TOOLS[name], ws, output_cap)
        entries.append(ToolEntry(name, "builtin", name, description, schema, call))
    return entries


def _file_caller(name: str, run: FileTool, ws: Workspace, cap: int) -> ToolCaller:
    return in_thread(name, lambda args: run(ws, args, cap))


def _bash_caller(
    ws: Workspace,
    default_timeout: float,
    cap: int,
    guard: GroupGuard | None,
    sandbox: ShellSandbox | None,
) -> ToolCaller:
    async def call(args: dict[str, Any]) -> ToolResult:
        command = get_str(args, "command")
        if not command.strip():
            raise ToolError("command is empty")
        timeout = min(get_float(args, "timeout") or default_timeout, MAX_BASH_TIMEOUT_S)
        return await run_bash(command, ws.root, timeout, cap, guard, sandbox)

    return safe_caller("bash", call)
