"""The admission decision: may this tool be offered, and called, now?

One composed sequence of gates, the first reason wins: the tool's own problem (an
invalid input schema), the scope's permanent exclusion, the server's own config (a host
file's `disabled_tools`), the `ext:` selection, then the lock pin. The registry
evaluates it once per change and keeps the verdicts; a turn reads them, a call looks
its name up once. Every gate is a pure function of the entry, so a verdict cannot go
stale between changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from launcher.config.types import ServerSpec
from launcher.toolset.scope import ToolScope
from launcher.toolset.types import ToolEntry

Gate = Callable[[ToolEntry], str | None]
"""Returns None to admit an entry, or the reason it is refused."""

SERVER_CONFIG = "off in the server's config"
"""Muted reason of a tool its server's own config turns off (`disabled_tools`, ...)."""


def schema_problem(entry: ToolEntry) -> str | None:
    """A tool its source marked unusable is refused whatever the scope says."""
    return entry.problem


def server_config(servers: Mapping[str, ServerSpec]) -> Gate:
    """The servers' own say: Codex's `disabled_tools` / `enabled_tools`, Gemini's."""

    def gate(entry: ToolEntry) -> str | None:
        server = servers.get(entry.server) if entry.server is not None else None
        return SERVER_CONFIG if server is not None and not server.offers(entry.tool) else None

    return gate


def compose(*gates: Gate) -> Gate:
    """One gate from several: the first reason wins; a gate that raises refuses (fail closed)."""

    def gate(entry: ToolEntry) -> str | None:
        try:
            for one in gates:
                reason = one(entry)
                if reason is not None:
                    return reason
        except Exception as exc:
            return f"gate failed: {exc!r}"
        return None

    return gate


def admission(scope: ToolScope, pin: Gate | None = None, *, source: Gate | None = None) -> Gate:
    """The session's one admission gate; `source` is the server config's say.

    The pin comes last: it judges only what the scope would offer, so an unselected tool
    keeps `not selected` (it was never pinned, and `not in lock` would mislead).
    """
    gates: list[Gate] = [schema_problem, scope.gate]
    if source is not None:
        gates.append(source)
    gates.append(scope.selects)
    if pin is not None:
        gates.append(pin)
    return compose(*gates)
