"""Flags and start-up chores shared by every stub server.

Stdlib only, so it runs before the SDK is imported.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any


def add_common_flags(parser: argparse.ArgumentParser) -> None:
    """Add the flags every stub understands (`--call-log`, `--marker`, `--pidfile`, `--pages`)."""
    parser.add_argument("--call-log", type=Path, help="append one JSON line per tools/call")
    parser.add_argument("--marker", type=Path, help="touch this file at process start")
    parser.add_argument("--pidfile", type=Path, help="write this process's pid here")
    parser.add_argument("--pages", type=int, default=0, help="serve tools/list in pages of N")


def early_start(args: argparse.Namespace) -> None:
    """Touch the marker and write the pid file; call before importing the SDK."""
    if args.marker is not None:
        args.marker.touch()
    if args.pidfile is not None:
        write_pidfile(args.pidfile)


def write_pidfile(path: Path) -> None:
    """Write this process's pid to `path`, whole: a reader never finds the file empty."""
    # Written beside it, then renamed into place: a reader polling for the file never
    # finds it created but not yet written.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(f"{os.getpid()}\n")
    os.replace(tmp, path)


class CallLog:
    """Appends one JSON line per tools/call, so tests can prove which calls reached the server."""

    def __init__(self, path: Path | None) -> None:
        self._path = path

    def record(
        self, tool: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None
    ) -> None:
        """Append `{"tool", "arguments", "meta", "ts"}` (`meta`: the request's `_meta`, e.g.
        its `traceparent`); a no-op when no log was asked for."""
        if self._path is None:
            return
        entry = {"tool": tool, "arguments": arguments, "meta": meta or {}, "ts": time.time()}
        line = json.dumps(entry, default=str) + "\n"
        # One write on an O_APPEND descriptor keeps lines whole even for concurrent calls.
        fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
