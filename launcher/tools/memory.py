"""Memory tools: an agent's persistent notes, one file per key, in its scope's directory."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from launcher.config.types import MemoryScope
from launcher.errors import ToolError
from launcher.tools.common import get_opt_str, get_str, in_thread
from launcher.tools.workspace import open_beneath, refuse_hard_links
from launcher.toolset.types import ToolEntry, ToolResult
from launcher.trust import MODEL_MEMORY

MAX_MEMORY_BYTES = 64 * 1024
"""One memory is a note, not a data store; larger writes are refused."""

KEY_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
"""Keys are plain file-name stems: no separators, no leading dot, so no escapes."""

SUFFIX = ".md"


def memory_dir(agent: str, scope: MemoryScope, workspace: Path, home: Path) -> Path:
    """Where `agent`'s memories live for `scope` (the directory need not exist yet)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", agent).lstrip(".") or "_"
    if scope == "project":
        return workspace / MODEL_MEMORY[0] / safe
    if scope == "local":
        return workspace / MODEL_MEMORY[1] / safe
    if scope == "user":
        return home / ".config" / "subagent" / "memory" / safe
    raise ValueError(f"unknown memory scope {scope!r}")


def memory_entries(agent: str, scope: MemoryScope, workspace: Path, home: Path) -> list[ToolEntry]:
    """The memory_read and memory_write tools of `agent`, storing under `scope`'s directory."""
    # Resolved bases: below them every path component must be real, not a symlink.
    base = home.resolve() if scope == "user" else workspace.resolve()
    root = memory_dir(agent, scope, workspace.resolve(), home.resolve())
    below = root.relative_to(base)

    def open_memory(key: str, flags: int, *, make_parents: bool = False) -> int:
        # Link-free from the base (trusted, made if missing): nothing below may be a symlink.
        if make_parents:
            base.mkdir(parents=True, exist_ok=True)
        return open_beneath(
            base, below / (key + SUFFIX), flags | os.O_NONBLOCK, 0o644, make_parents=make_parents
        )

    def read(args: dict[str, Any]) -> ToolResult:
        key = get_opt_str(args, "key")
        if key is None:
            keys = _keys(root)
            if not keys:
                return ToolResult("No memories saved yet.")
            return ToolResult("Memory keys:\n" + "\n".join(keys))
        file = _memory_file(root, _check_key(key))
        if not file.is_file():
            known = ", ".join(_keys(root)) or "none"
            raise ToolError(f"no memory named '{key}' (saved keys: {known})")
        fd = open_memory(key, os.O_RDONLY)
        with os.fdopen(fd, "rb") as f:
            refuse_hard_links(fd, f"memory '{key}'")
            return ToolResult(f.read(MAX_MEMORY_BYTES + 1).decode("utf-8", errors="replace"))

    def write(args: dict[str, Any]) -> ToolResult:
        key = _check_key(get_str(args, "key"))
        data = get_str(args, "content").encode("utf-8")
        if len(data) > MAX_MEMORY_BYTES:
            raise ToolError(f"content is {len(data)} bytes, over the {MAX_MEMORY_BYTES}-byte limit")
        _memory_file(root, key)
        fd = open_memory(key, os.O_WRONLY | os.O_CREAT, make_parents=True)
        with os.fdopen(fd, "wb") as f:
            # Not O_TRUNC: a hard-linked file is refused before a byte of it changes.
            refuse_hard_links(fd, f"memory '{key}'")
            os.ftruncate(fd, 0)
            f.write(data)
        return ToolResult(f"Saved memory '{key}' ({len(data)} bytes, {scope} scope)")

    where = {
        "project": "this project",
        "local": "this project (not shared)",
        "user": "all projects",
    }[scope]
    return [
        ToolEntry(
            name="memory_read",
            source="memory",
            tool="memory_read",
            description=(
                f"Read your persistent memory (kept across sessions for {where}). "
                "Without a key, lists the saved keys; with a key, returns that memory's text."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "key": {"type": "string", "description": "Memory key; omit to list keys."}
                },
                "additionalProperties": False,
            },
            call=in_thread("memory_read", read),
        ),
        ToolEntry(
            name="memory_write",
            source="memory",
            tool="memory_write",
            description=(
                f"Save text to your persistent memory under a key (kept across sessions for "
                f"{where}); overwrites that key. Keys: letters, digits, '_', '-', '.'."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "key": {"type": "string", "description": "Memory key, e.g. 'build-notes'."},
                    "content": {"type": "string", "description": "The full text to store."},
                },
                "required": ["key", "content"],
                "additionalProperties": False,
            },
            call=in_thread("memory_write", write),
        ),
    ]


def _check_key(key: str) -> str:
    if not KEY_RE.fullmatch(key) or ".." in key:
        raise ToolError(
            f"invalid memory key '{key}': use 1-100 letters, digits, '_', '-' or '.', "
            "not starting with '.', without '..' or path separators"
        )
    return key


def _memory_file(root: Path, key: str) -> Path:
    """The file for `key`, refusing symlinks: a committed link must not reach outside."""
    if root.exists() and root.resolve() != root:
        raise ToolError("the memory directory is reached through a symlink; refusing to use it")
    file = root / (key + SUFFIX)
    if file.is_symlink():
        raise ToolError(f"memory '{key}' is a symlink; refusing to follow it")
    return file


def _keys(root: Path) -> list[str]:
    if not root.is_dir():
        return []
    return sorted(p.name[: -len(SUFFIX)] for p in root.iterdir() if p.name.endswith(SUFFIX))
