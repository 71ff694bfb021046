"""Claude Code's hook matchers: all, a list of exact names, or an unanchored regex.

`*`, `""` or no matcher match everything; a matcher of only letters, digits, `_`, `-`,
spaces, `,` and `|` is a list of exact names (`Edit|Write`, `Edit, Write`); anything else
is a JavaScript regular expression tested anywhere in the name (`mcp__memory__.*`,
`^Notebook`). A leaf: config validates matchers with it, the runner matches with it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

_EXACT = re.compile(r"[A-Za-z0-9_\- ,|]*")
_SEPARATORS = re.compile(r"\s*[|,]\s*")
_JS_NAMED_GROUP = re.compile(r"\(\?<(?=[A-Za-z_])")
"""JavaScript's `(?<name>` is Python's `(?P<name>` (lookbehinds `(?<=`, `(?<!` stay)."""

Matcher = Callable[[str], bool]


@functools.cache
def compile_matcher(matcher: str | None) -> Matcher:
    """The predicate `matcher` stands for; re.error for a regex Python cannot read."""
    if matcher is None or matcher.strip() in ("", "*"):
        return _everything
    if _EXACT.fullmatch(matcher):
        names = frozenset(name for name in _SEPARATORS.split(matcher.strip()) if name)
        return names.__contains__
    pattern = re.compile(_JS_NAMED_GROUP.sub("(?P<", matcher))
    return lambda name: pattern.search(name) is not None


def matches(matcher: str | None, name: str) -> bool:
    """Whether `matcher` selects `name` (a tool name, or an agent name for SubagentStop)."""
    return compile_matcher(matcher)(name)


def _everything(name: str) -> bool:
    return True
