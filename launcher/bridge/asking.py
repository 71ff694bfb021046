"""Who answers a server's input request in this context: the host, when one can be asked.

Known only to the process running the session (a serve worker sends the request up its
pipe): it installs an `Asker` with `asking()` around the session, and every connection
the session opens (tasks started inside it, so they inherit the context) puts its
server's elicitations to it (bridge/elicitation.py). Stdlib only: a worker installs it
before any SDK module loads.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import Any

Asker = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""Asks the host `{"method": "elicitation/create", "params": {...}}` (wire JSON); returns
its answer (an ElicitResult's wire JSON), or None when the host cannot be asked."""

_HOST: ContextVar[Asker | None] = ContextVar("subagent_host_asker", default=None)


@contextlib.contextmanager
def asking(ask: Asker) -> Iterator[None]:
    """Within this block, sessions started here put their servers' input requests to `ask`."""
    token = _HOST.set(ask)
    try:
        yield
    finally:
        _HOST.reset(token)


def host_asker() -> Asker | None:
    """The Asker installed around this context, if any."""
    return _HOST.get()
