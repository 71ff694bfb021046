"""Other hosts' tool names in agent files, as our selectors, never wider than written.

Gemini CLI and opencode name a server's tool `PREFIX + SERVER + "_" + TOOL` (Gemini's
prefix is `mcp_`, opencode's none) and match globs over that whole name. Our selectors
split `SERVER__TOOL`, so a host glob becomes, for an allow list, one selector naming a
subset of what it names (or a refusal), and for a deny list, selectors naming a superset:
every way the host's `_` between server and tool can fall inside the glob.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase

from launcher.config.frontmatter import excerpt
from launcher.toolset.naming import NAME_SEPARATOR

_GLOB = frozenset("*?[")
MAX_PATTERN = 256
"""Longer entries are refused: a tool name is at most 64 characters, and a deny glob
becomes as many selectors as it has characters."""


def is_glob(text: str) -> bool:
    """Whether `text` has a glob character."""
    return any(ch in _GLOB for ch in text)


def builtins_matching(pattern: str, names: Mapping[str, str]) -> list[str]:
    """Our built-ins whose host name (`names`: host name -> ours) `pattern` matches."""
    return sorted({ours for host, ours in names.items() if fnmatchcase(host, pattern)})


def allow_selector(name: str, prefix: str, sep: str = "_") -> str:
    """A host's allow entry for servers' tools as one selector naming no more than it.

    `PREFIX*` is every server's tool, `PREFIX SERVER_*` the server, `PREFIX SERVER_TOOL`
    that tool, `PREFIX SERVER_GLOB` its tools the glob matches (split at the first `_`: a
    server whose name has one is then not named, narrower). A glob in the server part
    raises ValueError: it cannot be honoured exactly."""
    rest = name[len(prefix) :]
    if rest == "*":
        return f"*{NAME_SEPARATOR}*"
    server, found, tool = rest.partition(sep)
    if not found or not server or not tool or is_glob(server):
        raise ValueError(
            f"'{excerpt(name)}' names tools in a way that cannot be honoured exactly here "
            f"(use {prefix}*, {prefix}SERVER{sep}* or {prefix}SERVER{sep}TOOL, TOOL a glob or not)"
        )
    return f"ext:{server}" if tool == "*" else f"ext:{server}/{tool}"


def deny_selectors(pattern: str, prefix: str = "", sep: str = "_") -> list[str]:
    """`SERVER__TOOL` selectors that together name every server tool whose host name
    `PREFIX SERVER _ TOOL` the glob `pattern` matches (and maybe more: a deny may only
    narrow). ValueError for a `[...]` class, whose match cannot be bounded here."""
    if len(pattern) > MAX_PATTERN:
        raise ValueError(f"an entry of {len(pattern)} characters names no tool")
    if "[" in pattern:
        raise ValueError(f"'{excerpt(pattern)}': a [...] class cannot be denied exactly here")
    if not pattern.startswith(prefix):
        if not pattern or pattern[0] not in "*?":
            return []
        body = pattern  # a leading glob may cover the prefix too: keep it whole
    else:
        body = pattern[len(prefix) :]
    pairs: set[tuple[str, str]] = set()
    for index, char in enumerate(body):
        if body.startswith(sep, index):
            pairs.add((body[:index], body[index + len(sep) :]))
        if char == "*":
            pairs.add((body[:index] + "*", "*" + body[index + 1 :]))
        elif char == "?":
            pairs.add((body[:index], body[index + 1 :]))
    return sorted(f"{server}{NAME_SEPARATOR}{tool}" for server, tool in pairs if server and tool)
