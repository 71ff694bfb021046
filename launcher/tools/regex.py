"""Regular expressions the model writes (grep patterns, find/grep globs), in a linear-time
engine: RE2, the guarantee ripgrep's default engine gives.

Python's `re` backtracks: `(a+)+$` against forty `a`s and a `!` runs for hours, holding
the GIL, so the event loop, the tool timeout and the signal handlers starve with it. RE2
runs in time linear in the text whatever the pattern; it drops the features that need
backtracking (backreferences, lookaround, possessive quantifiers, `\\Z`), and a pattern
that uses them is refused with RE2's reason, as a tool error.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

import re2  # type: ignore[import-untyped]  # no stubs shipped

from launcher.errors import ToolError

UNSUPPORTED_HINT = "RE2 syntax: no backreferences, lookaround or possessive quantifiers"
"""Said with every refused pattern, so the model knows what to rewrite."""


class Regex(Protocol):
    """What the search tools need of a compiled pattern: matches in UTF-8 bytes."""

    def lines(self, blob: bytes) -> Iterator[tuple[int, int, int]]:
        """(line number from 1, start, end) of each line of `blob` holding a match."""
        ...


class _Re2Lines:
    """A multi-line RE2 pattern that never matches across a newline: one search finds the
    next matching line, so a file costs one pass plus one call per matching line."""

    def __init__(self, compiled: Any) -> None:
        self._compiled = compiled

    def lines(self, blob: bytes) -> Iterator[tuple[int, int, int]]:
        pos = counted = 0
        number = 1  # the line number of the line starting at `counted`
        size = len(blob)
        while pos <= size:
            found = self._compiled.search(blob, pos)
            if found is None:
                return
            start = blob.rfind(b"\n", 0, found.start()) + 1
            if start == size and (size == 0 or blob.endswith(b"\n")):
                return  # the empty "line" after the last newline is not a line
            number += blob.count(b"\n", counted, start)
            counted = start
            end = blob.find(b"\n", start)
            end = size if end < 0 else end
            yield number, start, end
            pos = end + 1


def _options(*, ignore_case: bool = False, whole_lines: bool = False) -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on our stderr
    options.case_sensitive = not ignore_case
    options.never_nl = whole_lines
    return options


def _reason(exc: Exception) -> str:
    text = exc.args[0] if exc.args else str(exc)
    return text.decode(errors="replace") if isinstance(text, bytes) else str(text)


def compile_lines(pattern: str, *, ignore_case: bool = False) -> Regex:
    """`pattern` as grep uses it: `^`/`$` at line ends, no match spans a newline."""
    try:
        options = _options(ignore_case=ignore_case, whole_lines=True)
        compiled = re2.compile("(?m)" + pattern, options)
    except re2.error as exc:
        reason = _reason(exc).replace("(?m)" + pattern, pattern)  # our prefix is not theirs
        raise ToolError(
            f"invalid regular expression '{pattern}': {reason} ({UNSUPPORTED_HINT})"
        ) from exc
    return _Re2Lines(compiled)


def compile_full(regex: str) -> Any:
    """A pattern matched against whole strings (a glob's translation); ValueError with
    RE2's reason when it cannot be compiled (the caller says it in the model's terms)."""
    try:
        return re2.compile(regex, _options())
    except re2.error as exc:
        raise ValueError(_reason(exc)) from exc
