"""Dialect by place: the folder an agent file sits in says which format it is written in.

One table, read by discovery for every folder it reads, `--config-dir` included: agent
files in a `.claude` folder are Claude Code files whichever flag names the folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

FOLDER_DIALECTS: Mapping[str, str] = {
    ".subagent": "subagent",
    ".claude": "claude",
    ".pi": "pi",
    ".agents": "pi",
    ".codex": "codex",
    ".gemini": "gemini",
    ".opencode": "opencode",
}
"""A tool's own folder -> the dialect of the agent files under it."""


def folder_dialect(directory: Path) -> str | None:
    """The dialect of agent files under `directory`: that of the nearest folder in
    FOLDER_DIALECTS among it and its parents, or None (then ours)."""
    for folder in (directory, *directory.parents):
        dialect = FOLDER_DIALECTS.get(folder.name)
        if dialect is not None:
            return dialect
    return None
