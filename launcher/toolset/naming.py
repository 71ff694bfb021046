"""Exposed tool names: `SERVER__TOOL`, reduced to what model APIs accept.

Model APIs take tool names matching `[A-Za-z0-9_-]{1,64}`. Reducing characters and
truncating can make two tools collide, so a colliding or over-long name gets a short
hash of its (server, tool) pair: stable across runs, unique in practice. Across servers,
a plain name belongs to the server earliest in config order that could spell it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field

MAX_NAME_LEN = 64
"""The tool-name limit of the OpenAI and Anthropic APIs."""

HASH_LEN = 8

NAME_SEPARATOR = "__"
"""Between server and tool in an exposed name: `SERVER__TOOL`."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


CLAUDE_BUILTIN_NAMES: Mapping[str, str] = {
    "read": "Read",
    "write": "Write",
    "edit": "Edit",
    "bash": "Bash",
    "grep": "Grep",
    "find": "Glob",
    "ls": "LS",
}
"""Our built-ins as a Claude Code agent's model is offered them."""
CLAUDE_MCP_PREFIX = "mcp__"


@dataclass(frozen=True)
class ToolNaming:
    """How one agent's model is offered names: ours (`SERVER__TOOL`, `read`) or another
    tool's, so that prompts written for it still work (Claude Code: `mcp__SERVER__TOOL`,
    `Read`). The registry names every tool through it; scope matches original names."""

    prefix: str = ""
    local: Mapping[str, str] = field(default_factory=dict)
    separator: str = NAME_SEPARATOR
    """Between server and tool (Gemini CLI and opencode write `_`)."""

    def local_name(self, name: str) -> str:
        """The exposed name of the built-in or memory tool `name`."""
        return self.local.get(name, name)


CODEX_BUILTIN_NAMES: Mapping[str, str] = {
    "bash": "shell",
    "read": "read_file",
    "ls": "list_dir",
    "grep": "grep_files",
}
"""Our built-ins as a Codex agent's model is offered them (the others keep our names)."""
GEMINI_BUILTIN_NAMES: Mapping[str, str] = {
    "read": "read_file",
    "write": "write_file",
    "edit": "replace",
    "bash": "run_shell_command",
    "grep": "grep_search",
    "find": "glob",
    "ls": "list_directory",
}
"""Our built-ins as a Gemini CLI agent's model is offered them."""
OPENCODE_BUILTIN_NAMES: Mapping[str, str] = {"find": "glob", "ls": "list"}
"""Our built-ins as an opencode agent's model is offered them (the others are its names)."""

DEFAULT_NAMING = ToolNaming()
NAMINGS: Mapping[str, ToolNaming] = {
    "claude": ToolNaming(prefix=CLAUDE_MCP_PREFIX, local=CLAUDE_BUILTIN_NAMES),
    "codex": ToolNaming(prefix=CLAUDE_MCP_PREFIX, local=CODEX_BUILTIN_NAMES),
    "gemini": ToolNaming(prefix="mcp_", local=GEMINI_BUILTIN_NAMES, separator="_"),
    "opencode": ToolNaming(local=OPENCODE_BUILTIN_NAMES, separator="_"),
}
"""Agent-file dialects whose model is offered that tool's own names."""


def naming_for(dialect: str) -> ToolNaming:
    """The naming of an agent of `dialect` (ours unless the dialect has its own)."""
    return NAMINGS.get(dialect, DEFAULT_NAMING)


def sanitize(text: str) -> str:
    """Replace every character outside `[A-Za-z0-9_-]` (what model APIs accept) with `_`."""
    return _UNSAFE.sub("_", text)


def plain_name(server: str, tool: str, prefix: str = "", separator: str = NAME_SEPARATOR) -> str:
    """A server tool's name before collision or length handling: sanitized `SERVER__TOOL`
    (after the naming's prefix: `mcp__SERVER__TOOL` for Claude Code agents)."""
    return sanitize(f"{prefix}{server}{separator}{tool}")


def name_hash(server: str, tool: str, length: int = HASH_LEN) -> str:
    """A stable hex digest of the (server, tool) pair, `length` characters long."""
    return hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:length]


def _with_suffix(base: str, suffix: str) -> str:
    return f"{base[: MAX_NAME_LEN - len(suffix) - 1]}_{suffix}"


def could_spell(server: str, name: str, prefix: str = "", separator: str = NAME_SEPARATOR) -> bool:
    """Whether some tool of `server` has `name` as its plain name (any tool name may come)."""
    return name.startswith(prefix + sanitize(server) + separator)


def exposed_name(
    server: str,
    tool: str,
    taken: Container[str],
    earlier: Iterable[str] = (),
    naming: ToolNaming = DEFAULT_NAMING,
) -> str:
    """The exposed name of `server`'s `tool`, avoiding every name in `taken`.

    The plain name when it fits, is free, and no server in `earlier` (those before
    `server` in config order) could spell it; else a truncated name with a hash suffix.
    """
    base = plain_name(server, tool, naming.prefix, naming.separator)
    claimed = any(
        could_spell(other, base, naming.prefix, naming.separator)
        for other in earlier
        if other != server
    )
    if len(base) <= MAX_NAME_LEN and base not in taken and not claimed:
        return base
    digest = name_hash(server, tool, length=64)
    # Longer digests first, a counter last: a 64-bit clash is not expected, but the
    # result must still be unique and deterministic if it happens.
    for length in (HASH_LEN, 16, 32):
        candidate = _with_suffix(base, digest[:length])
        if candidate not in taken:
            return candidate
    counter = 2
    while True:
        candidate = _with_suffix(base, f"{digest[:HASH_LEN]}{counter}")
        if candidate not in taken:
            return candidate
        counter += 1
