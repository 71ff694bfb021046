"""The file tools that look across the tree: ls, find, grep."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from launcher.errors import ToolError
from launcher.tools.common import fit_lines, get_bool, get_opt_str, get_str
from launcher.tools.files import MAX_FILE_BYTES, is_binary
from launcher.tools.regex import Regex, compile_full, compile_lines
from launcher.tools.workspace import Workspace
from launcher.toolset.types import ToolResult

MAX_LS_ENTRIES = 1000
"""Entries `ls` lists before saying how many it left out."""

MAX_FIND_RESULTS = 1000
"""Paths `find` returns before saying it stopped."""

MAX_GREP_MATCHES = 500
"""Matching lines `grep` returns before saying it stopped."""

MAX_GREP_LINE_CHARS = 500
"""Longer matching lines are cut so one minified file cannot fill the output."""

SKIP_DIRS = frozenset({".git"})
"""Directories walks never enter: version-control internals are noise for a model."""


def list_dir(ws: Workspace, args: dict[str, Any], cap: int) -> ToolResult:
    """One directory's entries, sorted; directories end in `/`, symlinks in `@`."""
    path = get_str(args, "path", ".")
    real = ws.resolve(path)
    shown = ws.display(real)
    if not real.exists():
        raise ToolError(f"not found: {shown}")
    if not real.is_dir():
        raise ToolError(f"'{shown}' is not a directory; use read to see a file")
    # Listed through a link-free fd, so a directory swapped for a symlink is not listed.
    fd = ws.open(real, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with os.scandir(fd) as listing:
            entries = sorted(listing, key=lambda e: e.name)
            names = [_entry_label(e) for e in entries[:MAX_LS_ENTRIES]]
    finally:
        os.close(fd)
    if not entries:
        return ToolResult(f"({shown} is empty)")
    fit = fit_lines(names, cap - 200)
    out = "\n".join(names[:fit])
    if fit < len(entries):
        out += f"\n... [{len(entries) - fit} more entries not shown]"
    return ToolResult(out)


def _entry_label(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return entry.name + "@"
    return entry.name + "/" if entry.is_dir() else entry.name


def find_paths(ws: Workspace, args: dict[str, Any], cap: int) -> ToolResult:
    """Workspace paths under `path` whose name (or relative path) matches a glob."""
    pattern = get_str(args, "pattern")
    base = _search_base(ws, get_str(args, "path", "."))
    matcher = compile_glob(pattern)
    found: list[str] = []
    truncated = False
    for full, is_dir in _walk(ws, base):
        rel = full.relative_to(base).as_posix()
        if matcher(rel):
            if len(found) == MAX_FIND_RESULTS:
                truncated = True
                break
            found.append(ws.display(full) + ("/" if is_dir else ""))
    if not found:
        return ToolResult(f"No paths match '{pattern}' under {ws.display(base)}")
    fit = fit_lines(found, cap - 200)
    out = "\n".join(found[:fit])
    if truncated or fit < len(found):
        out += f"\n... [stopped after {fit} results; narrow the pattern or the path]"
    return ToolResult(out)


def grep_files(
    ws: Workspace,
    args: dict[str, Any],
    cap: int,
    *,
    compile_pattern: Callable[..., Regex] = compile_lines,
) -> ToolResult:
    """Lines matching a regex in text files under `path`, as `path:line:text`.

    `compile_pattern` is the engine (linear-time RE2, regex.py); a caller may pass another.
    """
    pattern = get_str(args, "pattern")
    base = _search_base(ws, get_str(args, "path", "."))
    glob = get_opt_str(args, "glob")
    regex = compile_pattern(pattern, ignore_case=get_bool(args, "ignore_case"))
    matcher = compile_glob(glob) if glob else None
    files = [base] if base.is_file() else [p for p, d in _walk(ws, base) if not d]
    hits: list[str] = []
    size = 0
    for file in files:
        if matcher and not matcher(
            file.relative_to(base).as_posix() if file != base else file.name
        ):
            continue
        blob = _text_blob(ws, file)
        if blob is None:
            continue
        for number, start, end in regex.lines(blob):
            line = blob[start:end].decode()
            cut = line[:MAX_GREP_LINE_CHARS] + (
                " [line cut]" if len(line) > MAX_GREP_LINE_CHARS else ""
            )
            hit = f"{ws.display(file)}:{number}:{cut}"
            size += len(hit) + 1
            if len(hits) == MAX_GREP_MATCHES or size > cap - 200:
                hits.append(
                    f"... [stopped after {len(hits)} matches; narrow the pattern, path or glob]"
                )
                return ToolResult("\n".join(hits))
            hits.append(hit)
    if not hits:
        return ToolResult(f"No matches for /{pattern}/ under {ws.display(base)}")
    return ToolResult("\n".join(hits))


def _search_base(ws: Workspace, path: str) -> Path:
    real = ws.resolve(path)
    if not real.exists():
        raise ToolError(f"not found: {ws.display(real)}")
    return real


def _walk(ws: Workspace, base: Path) -> Iterator[tuple[Path, bool]]:
    """Every path under `base` in sorted order, as (path, is_dir), staying in the workspace.

    Symlinks are listed only when their target is inside the workspace and are never
    descended into, so a link to a directory outside cannot widen the search.
    """
    for top, dirs, files in os.walk(base, followlinks=False):
        root = Path(top)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        entries = [(d, True) for d in dirs] + [(f, False) for f in files]
        for name, is_dir in sorted(entries):
            full = root / name
            if full.is_symlink():
                if not ws.contains(full):
                    continue
                is_dir = full.is_dir()
            yield full, is_dir


def _text_blob(ws: Workspace, file: Path) -> bytes | None:
    """A text file's contents as valid UTF-8 with `\n` line ends; binary, huge, hard-linked
    or unreadable: None.

    Opened link-free from the workspace root, like read: the walk's check cannot be raced.
    """
    real = Path(os.path.realpath(file))  # an in-workspace symlink is read as its target
    if not real.is_relative_to(ws.root):
        return None
    try:
        fd = ws.open(real, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ToolError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1 or st.st_size > MAX_FILE_BYTES:
            return None
        data = os.pread(fd, MAX_FILE_BYTES + 1, 0)
    except OSError:
        return None
    finally:
        os.close(fd)
    if is_binary(data):
        return None
    # Undecodable bytes become U+FFFD, as the model is shown them; CRLF ends lines too.
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").encode()


def compile_glob(pattern: str) -> Callable[[str], bool]:
    """A matcher for a glob over `/`-separated relative paths.

    A pattern without `/` matches the last path component (`*.py` finds Python files at
    any depth); one with `/` matches the whole relative path, where `**` spans directories
    and `*`, `?` and `[...]` stay within one. Matched by RE2: `*a*a*a*b` against a long
    name would backtrack for hours in `re`. ToolError naming what is wrong with a glob
    that cannot be compiled.
    """
    try:
        if "/" not in pattern:
            regex = compile_full(_glob_to_regex(pattern))
            return lambda rel: regex.fullmatch(rel.rsplit("/", 1)[-1]) is not None
        regex = compile_full(_glob_to_regex(pattern.lstrip("/")))
    except ValueError as exc:
        # The engine's own message points into the translation, not the model's pattern.
        raise ToolError(f"invalid glob '{pattern}': {_glob_problem(pattern, str(exc))}") from exc
    return lambda rel: regex.fullmatch(rel) is not None


def _glob_problem(pattern: str, reason: str) -> str:
    """What is wrong with `pattern`, in glob terms where it can be said."""
    for body in re.findall(r"\[!?(.[^\]]*)\]", pattern):
        for start, end in re.findall(r"(.)-([^\]])", body):
            if start > end:
                return f"the range '{start}-{end}' runs backwards; write '{end}-{start}'"
    if "[" in pattern:
        return f"a '[...]' set is not well formed ({reason})"
    return reason


def _glob_to_regex(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)
