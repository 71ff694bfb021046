"""The file tools that read and change one file: read, write, edit."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from launcher.errors import ToolError
from launcher.tools.common import fit_lines, get_bool, get_int, get_str
from launcher.tools.workspace import Workspace, refuse_hard_links
from launcher.toolset.types import ToolResult

MAX_FILE_BYTES = 10 * 1024 * 1024
"""Files larger than this are logs or data dumps; read and edit refuse them, grep skips them."""

BINARY_SNIFF_BYTES = 8192
"""A NUL byte in this many leading bytes marks a file as binary (git's heuristic)."""

DEFAULT_READ_LIMIT = 2000
"""Lines `read` returns when no limit is given."""

MAX_LINE_CHARS = 2000
"""Longer lines are cut in `read` output so one minified line cannot fill the context."""


def is_binary(head: bytes) -> bool:
    """True when the leading bytes of a file look binary."""
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


def load_text(ws: Workspace, real: Path, *, strict: bool = False) -> str:
    """Read a workspace text file whole, refusing directories, huge and binary files.

    `strict` refuses text that is not valid UTF-8 (edit must not mangle bytes it rewrites).
    """
    fd = _open_existing(ws, real, os.O_RDONLY)
    try:
        return _decode(ws.display(real), fd, strict=strict)
    finally:
        os.close(fd)


def _open_existing(ws: Workspace, real: Path, flags: int) -> int:
    """An fd on an existing workspace file (O_NONBLOCK: a FIFO must not hang the tool)."""
    shown = ws.display(real)
    try:
        return ws.open(real, flags | os.O_NONBLOCK)
    except FileNotFoundError:
        raise ToolError(f"file not found: {shown}") from None
    except IsADirectoryError:
        raise ToolError(f"'{shown}' is a directory; use ls to list it") from None


def _decode(shown: str, fd: int, *, strict: bool) -> str:
    """The text behind `fd`, after the checks every reader makes (kind, links, size, binary)."""
    st = refuse_hard_links(fd, shown)
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(f"'{shown}' is a directory; use ls to list it")
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(f"'{shown}' is not a regular file; refused")
    size = st.st_size
    if size > MAX_FILE_BYTES:
        raise ToolError(
            f"'{shown}' is {size} bytes, over the {MAX_FILE_BYTES}-byte limit; "
            "use grep, or bash with head/sed, to look at parts of it"
        )
    data = os.pread(fd, MAX_FILE_BYTES + 1, 0)
    if is_binary(data):
        raise ToolError(f"'{shown}' looks like a binary file ({size} bytes); refused")
    try:
        return data.decode("utf-8", errors="strict" if strict else "replace")
    except UnicodeDecodeError as exc:
        raise ToolError(f"'{shown}' is not valid UTF-8 ({exc.reason}); refused") from exc


def _replace_contents(fd: int, data: bytes) -> None:
    """Make the file behind `fd` hold exactly `data`."""
    os.ftruncate(fd, 0)
    view = memoryview(data)
    offset = 0
    while offset < len(view):
        offset += os.pwrite(fd, view[offset:], offset)


def readable(ws: Workspace, also: Workspace | None, path: str) -> tuple[Workspace, Path]:
    """Where `read` finds `path`: the workspace, or `also` (read only) when given in full there."""
    if also is not None and os.path.isabs(path):
        if Path(os.path.realpath(path)).is_relative_to(also.root):
            return also, also.resolve(path)
    return ws, ws.resolve(path)


def read_file(
    ws: Workspace, args: dict[str, Any], cap: int, *, also: Workspace | None = None
) -> ToolResult:
    """Lines of a text file, numbered from 1 as `cat -n` does, from `offset` for `limit` lines.

    `also` is a second root `read` alone may use: where oversized results were saved.
    """
    path = get_str(args, "path")
    offset = get_int(args, "offset", 1, minimum=1)
    limit = get_int(args, "limit", DEFAULT_READ_LIMIT, minimum=1)
    ws, real = readable(ws, also, path)
    text = load_text(ws, real)
    lines = text.splitlines()
    if not lines:
        return ToolResult(f"({ws.display(real)} is empty)")
    if offset > len(lines):
        raise ToolError(
            f"offset {offset} is past the end of {ws.display(real)} ({len(lines)} lines)"
        )
    window = lines[offset - 1 : offset - 1 + limit]
    numbered = [
        f"{offset + i:6}\t{line[:MAX_LINE_CHARS]}"
        + (" [line cut]" if len(line) > MAX_LINE_CHARS else "")
        for i, line in enumerate(window)
    ]
    shown = fit_lines(numbered, cap - 200)
    last = offset + shown - 1
    out = "\n".join(numbered[:shown])
    if last < len(lines):
        why = "output cap" if shown < len(window) else "limit"
        out += (
            f"\n... [{why}: showed lines {offset}-{last} of {len(lines)}; "
            f"continue with offset={last + 1}]"
        )
    return ToolResult(out)


def write_file(ws: Workspace, args: dict[str, Any], cap: int) -> ToolResult:
    """Create or overwrite a file with `content`, creating parent directories."""
    path = get_str(args, "path")
    content = get_str(args, "content")
    real = ws.resolve(path)
    ws.refuse_protected(path, real)
    shown = ws.display(real)
    if real.is_dir():
        raise ToolError(f"'{shown}' is a directory; refused")
    data = content.encode("utf-8")
    flags = os.O_WRONLY | os.O_NONBLOCK
    try:
        fd = ws.open(real, flags | os.O_CREAT | os.O_EXCL, make_parents=True)
        existed = False
    except FileExistsError:
        # Not O_TRUNC: the link count is checked before a single byte changes.
        try:
            fd = ws.open(real, flags)
        except IsADirectoryError:
            raise ToolError(f"'{shown}' is a directory; refused") from None
        existed = True
    try:
        if existed:
            st = refuse_hard_links(fd, shown)
            if not stat.S_ISREG(st.st_mode):
                raise ToolError(f"'{shown}' is not a regular file; refused")
        _replace_contents(fd, data)
    finally:
        os.close(fd)
    verb = "overwrote" if existed else "created"
    return ToolResult(f"Wrote {len(data)} bytes to {shown} ({verb})")


def edit_file(ws: Workspace, args: dict[str, Any], cap: int) -> ToolResult:
    """Replace the exact string `old` with `new`; `old` must match once unless replace_all."""
    path = get_str(args, "path")
    old = get_str(args, "old")
    new = get_str(args, "new")
    replace_all = get_bool(args, "replace_all")
    if not old:
        raise ToolError("'old' is empty; use write to create or overwrite a file")
    if old == new:
        raise ToolError("'old' and 'new' are identical; nothing to change")
    real = ws.resolve(path)
    ws.refuse_protected(path, real)
    shown = ws.display(real)
    fd = _open_existing(ws, real, os.O_RDWR)
    try:
        text = _decode(shown, fd, strict=True)
        count = _count_matches(text, old, shown, replace_all)
        # Written through the fd that was read: the file checked is the file changed.
        _replace_contents(fd, text.replace(old, new).encode("utf-8"))
    finally:
        os.close(fd)
    noun = "occurrence" if count == 1 else "occurrences"
    return ToolResult(f"Replaced {count} {noun} in {shown}")


def _count_matches(text: str, old: str, shown: str, replace_all: bool) -> int:
    """How often `old` occurs; none, or several without replace_all, is refused."""
    count = text.count(old)
    if count == 0:
        raise ToolError(f"'old' was not found in {shown} (0 matches); it must match exactly")
    if count > 1 and not replace_all:
        raise ToolError(
            f"'old' matches {count} times in {shown}; add surrounding context to make it "
            "unique, or set replace_all to replace every match"
        )
    return count
