"""Evaluating expectations: pure functions from what a session showed to failure messages.

Each message starts with the expectation's kind and names the value that failed, e.g.
`tools_present: 'ext:mcp-github/get_*' matched no active tool (active: read, grep)`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from launcher.config.expect import Expectations, RunExpect
from launcher.config.types import Selector
from launcher.events import RunStatus
from launcher.toolset.scope import selector_matches
from launcher.toolset.types import ToolEntry

_LIST_LIMIT = 12
"""Names listed in a message before it is cut short: enough to see what was there."""


@dataclass(frozen=True)
class Surface:
    """What the model would get after the ready barrier plus settle."""

    active: Sequence[ToolEntry]
    servers: Mapping[str, str]  # configured server -> state (`connected`, `not_started`, ...)
    prompt: str


@dataclass
class RunRecord:
    """What a run's event stream showed: its end, the calls made, the results that erred."""

    status: RunStatus = RunStatus.STOPPED
    result: str = ""
    calls: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def matches(pattern: str, entry: ToolEntry) -> bool:
    """`ext:SERVER` / `ext:SERVER/GLOB` on the tool's origin, or an exposed name (a
    `SERVER__TOOL` split at a `__`, else a glob), matched as an agent's `tools` are."""
    return selector_matches(pattern_selector(pattern), entry)


def pattern_selector(pattern: str) -> Selector:
    """The selector a `tools_present` / `tools_absent` pattern spells."""
    if pattern.startswith("ext:"):
        server, _, glob = pattern[len("ext:") :].partition("/")
        return Selector(kind="ext", server=server, tool=glob or None, raw=pattern)
    return Selector(kind="name", name=pattern, raw=pattern)


def evaluate_surface(expect: Expectations, surface: Surface) -> list[str]:
    """Failures of the tool, server and prompt expectations, in the order they are written."""
    failures: list[str] = []
    names = [e.name for e in surface.active]
    for pattern in expect.tools_present:
        if not any(matches(pattern, e) for e in surface.active):
            failures.append(
                f"tools_present: '{pattern}' matched no active tool (active: {_names(names)})"
            )
    for pattern in expect.tools_absent:
        hits = [e.name for e in surface.active if matches(pattern, e)]
        if hits:
            failures.append(f"tools_absent: '{pattern}' is active as {_names(hits)}")
    for server in expect.servers_connected:
        state = surface.servers.get(server, "not configured")
        if state != "connected":
            failures.append(f"servers_connected: '{server}' is {state}")
    for server in expect.servers_not_started:
        state = surface.servers.get(server, "not configured")
        if state not in ("not_started", "not configured"):
            failures.append(f"servers_not_started: '{server}' was started ({state})")
    for text in expect.prompt_contains:
        if text not in surface.prompt:
            failures.append(f"prompt_contains: '{text}' is not in the system prompt")
    for text in expect.prompt_absent:
        if text in surface.prompt:
            failures.append(f"prompt_absent: '{text}' is in the system prompt")
    return failures


def evaluate_run(expect: RunExpect, record: RunRecord) -> list[str]:
    """Failures of a run's expectations: its status, result text, tool errors and calls."""
    failures: list[str] = []
    if record.status != expect.status:
        failures.append(
            f"run.status: expected {expect.status}, got {record.status}"
            + (f" ({_short(record.result)})" if record.result else "")
        )
    for text in expect.result_contains:
        if text not in record.result:
            failures.append(
                f"run.result_contains: '{text}' is not in the result ({_short(record.result)})"
            )
    if isinstance(expect.tool_errors, int):
        if len(record.errors) != expect.tool_errors:
            failures.append(
                f"run.tool_errors: expected {expect.tool_errors}, got {len(record.errors)}"
                + (f" ({_names(record.errors)})" if record.errors else "")
            )
    elif expect.tool_errors is not None:
        erred = set(record.errors)
        missing = [n for n in expect.tool_errors if not any(fnmatchcase(e, n) for e in erred)]
        extra = [e for e in erred if not any(fnmatchcase(e, n) for n in expect.tool_errors)]
        if missing:
            failures.append(f"run.tool_errors: '{missing[0]}' returned no error")
        if extra:
            failures.append(f"run.tool_errors: unexpected error from {_names(sorted(extra))}")
    for pattern in expect.calls:
        if not any(fnmatchcase(name, pattern) for name in record.calls):
            failures.append(
                f"run.calls: '{pattern}' was never called (called: {_names(record.calls)})"
            )
    return failures


def _names(names: Iterable[str]) -> str:
    unique = list(dict.fromkeys(names))
    if not unique:
        return "none"
    shown = ", ".join(unique[:_LIST_LIMIT])
    return shown + (f", ... {len(unique) - _LIST_LIMIT} more" if len(unique) > _LIST_LIMIT else "")


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
