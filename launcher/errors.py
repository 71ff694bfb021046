"""The error hierarchy of subagent.

SubagentError
├── ConfigError         the user's mistake (bad config, bad usage): exit status 2
│   ├── UsageError      bad command-line usage (unknown agent, unknown --ext server)
│   └── ExpansionError  a `${VAR}` reference that cannot be expanded (never shows a value)
├── RunError            a run failed (required server, model, agent): exit status 1
│   ├── ServerError     an MCP server failed to start or died
│   │   ├── SpawnError     a stdio server could not be spawned (the message is the reason)
│   │   └── ProtocolError  a server broke the protocol (e.g. a repeated tools/list cursor)
│   ├── ModelError      a model provider failed (HTTP status, network, no key)
│   │   └── StreamStalled  the model's stream went silent past the idle timeout, every retry
│   └── AuthError       an OAuth login or token refresh failed (never shows a token)
├── Interrupted         SIGINT/SIGTERM/SIGHUP ended the run cleanly: exit status 128 + signal
└── ToolError           a tool call failed; the model sees it as an error tool result
"""

from __future__ import annotations

import signal
from pathlib import Path


class SubagentError(Exception):
    """Base of every error subagent raises on purpose."""

    exit_code = 1


class ConfigError(SubagentError):
    """Malformed or inconsistent configuration; names the file, line and field."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.path = Path(path) if path is not None else None
        self.line = line
        self.field = field
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = str(self.path)
            if self.line is not None:
                where += f":{self.line}"
        if self.field:
            where = f"{where}: field '{self.field}'" if where else f"field '{self.field}'"
        return f"{where}: {self.message}" if where else self.message


class UsageError(ConfigError):
    """Bad command-line usage: unknown agent, --ext naming no configured server."""


class StateHomeError(ConfigError, OSError):
    """SUBAGENT_HOME (or a directory under it) cannot be made or tightened: exit 2, naming
    it. Also an OSError, so code that carries on without its logs still does."""


class RunError(SubagentError):
    """A run failed: a required server, the model or the agent."""

    exit_code = 1


class ExpansionError(ConfigError):
    """A `${VAR}` reference could not be expanded; the message names the variable only."""


class ServerError(RunError):
    """An MCP server failed to start, crashed, or broke the protocol."""

    def __init__(self, server: str, message: str) -> None:
        self.server = server
        super().__init__(f"server '{server}': {message}")


class SpawnError(RunError):
    """A stdio server could not be spawned; the message is the whole reason."""


class ProtocolError(RunError):
    """A server answered against the protocol (the message says how)."""


class ModelError(RunError):
    """A model provider failed: HTTP error, network error or missing credentials."""


class StreamStalled(ModelError):
    """The model sent nothing for the idle timeout, on every attempt the retry rules allow."""


class ToolError(SubagentError):
    """A tool call failed; becomes an error tool result the model sees."""


class Interrupted(SubagentError):
    """SIGINT, SIGTERM or SIGHUP ended the run; the session closed cleanly first."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.exit_code = 128 + signum
        super().__init__(f"interrupted ({signal.Signals(signum).name}); session closed")


class AuthError(RunError):
    """An OAuth login or token refresh failed; the message says what to do (never a token)."""
