"""Exposed tool names: `SERVER__TOOL`, reduced to what model APIs accept.

Model APIs take tool names matching `[A-Za-z0-9_-]{1,64}`. Reducing characters and
truncating can make two tools collide, so a colliding or over-long name gets a short
hash of its (server, tool) pair: stable across runs, unique in practice. Across servers,
a plain name belongs to the server earliest in config order that could spell it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Container, Iterable

MAX_NAME_LEN = 64
"""The tool-name limit of the OpenAI and Anthropic APIs."""

HASH_LEN = 8

NAME_SEPARATOR = "__"
"""Between server and tool in an exposed name: `SERVER__TOOL`."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def sanitize(text: str) -> str:
    """Replace every character outside `[A-Za-z0-9_-]` (what model APIs accept) with `_`."""
    return _UNSAFE.sub("_", text)


def plain_name(server: str, tool: str) -> str:
    """A server tool's name before collision or length handling: sanitized `SERVER__TOOL`."""
    return sanitize(f"{server}{NAME_SEPARATOR}{tool}")


def name_hash(server: str, tool: str, length: int = HASH_LEN) -> str:
    """A stable hex digest of the (server, tool) pair, `length` characters long."""
    return hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:length]


def _with_suffix(base: str, suffix: str) -> str:
    return f"{base[: MAX_NAME_LEN - len(suffix) - 1]}_{suffix}"


def could_spell(server: str, name: str) -> bool:
    """Whether some tool of `server` has `name` as its plain name (any tool name may come)."""
    return name.startswith(sanitize(server) + NAME_SEPARATOR)


def exposed_name(server: str, tool: str, taken: Container[str], earlier: Iterable[str] = ()) -> str:
    """The exposed name of `server`'s `tool`, avoiding every name in `taken`.

    The plain name when it fits, is free, and no server in `earlier` (those before
    `server` in config order) could spell it; else a truncated name with a hash suffix.
    """
    base = plain_name(server, tool)
    claimed = any(could_spell(other, base) for other in earlier if other != server)
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
