"""`subagent --version`: one line, from the package and the interpreter (stdlib only)."""

from __future__ import annotations

import sys


def version_line() -> str:
    """The version and the interpreter it runs on (no typer import)."""
    from launcher import __version__

    return f"subagent {__version__} (Python {sys.version.split()[0]}, {sys.executable})"
