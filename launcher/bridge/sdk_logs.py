"""The SDK's log records, each kept in the log of the session that caused it.

The `mcp` logger is process-wide, but `subagent check --jobs N` runs N sessions in one
process: one handler routes each record by a context variable that a session sets in
its own task tree (anyio tasks and worker threads inherit it), so a session's
`sdk.log` holds only its own records, masked with its own secrets.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from launcher.secrets import SecretMask
from launcher.state import private_opener

SDK_LOGGER = "mcp"
"""The SDK's root logger: every `mcp.*` record reaches it."""

_current: ContextVar[_SessionLog | None] = ContextVar("subagent_sdk_log", default=None)
_users = 0
"""Sessions routing now; the router is installed while there is at least one."""


class _SessionLog(logging.FileHandler):
    """One session's `sdk.log`: 0600 like everything under SUBAGENT_HOME, masked lines."""

    def __init__(self, path: Path, mask: SecretMask) -> None:
        super().__init__(path, delay=True, encoding="utf-8")
        self._mask = mask
        self.setFormatter(logging.Formatter())

    def _open(self) -> io.TextIOWrapper:
        stream = open(self.baseFilename, self.mode, encoding=self.encoding, opener=private_opener)
        assert isinstance(stream, io.TextIOWrapper)  # text mode: FileHandler writes str
        return stream

    def format(self, record: logging.LogRecord) -> str:
        # Tracebacks included: a protocol error's repr may quote a secret.
        return self._mask.text(super().format(record))


class _Router(logging.Handler):
    """Hands each record to the log of the session whose task tree emitted it."""

    def emit(self, record: logging.LogRecord) -> None:
        target = _current.get()
        # Outside every session there is no log that may hold it: the terminal may not.
        if target is not None:
            target.handle(record)


_ROUTER = _Router()


@contextmanager
def session_sdk_log(path: Path, mask: SecretMask) -> Iterator[None]:
    """While inside, SDK records from this task tree go to `path`, masked with `mask`."""
    global _users
    target = _SessionLog(path, mask)
    logger = logging.getLogger(SDK_LOGGER)
    if _users == 0:
        logger.addHandler(_ROUTER)
        # The SDK logs protocol noise (junk lines, tracebacks): never to the user's terminal.
        logger.propagate = False
    _users += 1
    token = _current.set(target)
    try:
        yield
    finally:
        _current.reset(token)
        _users -= 1
        if _users == 0:
            logger.removeHandler(_ROUTER)
            logger.propagate = True
        target.close()
