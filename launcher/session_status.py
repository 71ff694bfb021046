"""Each configured server's state as `subagent tools --json` reports it, read back from a
session's own event stream (the stream is the source of truth, never private state)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from launcher.bridge.phase import REPORTED, ServerPhase
from launcher.events import Event, ServerState, ToolsChanged


@dataclass
class ServerStatus:
    """A configured server's state as `subagent tools --json` reports it."""

    state: ServerPhase
    tools: int = 0
    error: str | None = None
    info: dict[str, str | None] | None = field(default=None, compare=False)
    """The server's own name and version (initialize `serverInfo`), once connected."""


class ServerBook:
    """What `Session.status()` reports: every configured server's last `server_state`, and
    its tool count from `tools_changed` events (which also follow list_changed re-lists)."""

    def __init__(self, servers: Sequence[str]) -> None:
        self._servers = tuple(servers)
        self._states: dict[str, ServerState] = {}
        self._tools: dict[str, set[str]] = {}
        self._info: dict[str, dict[str, str | None]] = {}

    def record(self, event: Event) -> None:
        """Take one (masked) event of the session's stream into account."""
        if isinstance(event, ServerState):
            self._states[event.server] = event
            if event.server_info is not None:
                self._info[event.server] = event.server_info
        elif isinstance(event, ToolsChanged) and event.source in self._servers:
            tools = self._tools.setdefault(event.source, set())
            tools.difference_update(event.removed)
            tools.update(event.added)

    def status(self) -> dict[str, ServerStatus]:
        """Every configured server's state; one never started is `not_started`."""
        out: dict[str, ServerStatus] = {}
        for name in self._servers:
            last = self._states.get(name)
            if last is None:
                out[name] = ServerStatus(ServerPhase.NOT_STARTED)
                continue
            # A server still `starting` has not made the ready barrier: it did not start.
            state = ServerPhase(last.state) if last.state in REPORTED else ServerPhase.FAILED
            count = len(self._tools.get(name, ()))
            out[name] = ServerStatus(state, count, last.error, self._info.get(name))
        return out
