"""A server connection's phase: one enum, compared nowhere as a bare string."""

from __future__ import annotations

from enum import StrEnum


class ServerPhase(StrEnum):
    """Where a connection is in its life; the value is the `server_state` event's `state`."""

    NOT_STARTED = "not_started"
    STARTING = "starting"
    CONNECTED = "connected"
    FAILED = "failed"
    CLOSED = "closed"

    @property
    def ended(self) -> bool:
        """Failed or closed: the connection will not serve calls again."""
        return self in (ServerPhase.FAILED, ServerPhase.CLOSED)


REPORTED = (ServerPhase.CONNECTED, ServerPhase.FAILED, ServerPhase.CLOSED)
"""The states `subagent tools` reports for a started server (CONTRACT.md)."""
