"""Session.close() is bounded: a connection that does not end within CLOSE_GRACE_S (an HTTP
server whose shutdown hangs) is cancelled, so the session still returns."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from launcher.config.types import AgentSpec, ServerSpec
from launcher.events import EventSink, ServerState
from launcher.run_plan import RunPlan
from launcher.session import Session

pytestmark = pytest.mark.anyio

GRACE_S = 0.2
LIMIT_S = 5.0
"""Far above the grace period; without the fix the session never returns at all."""


class HangingConnection:
    """Connects at once, then ignores `close()`: its owner task only ends when cancelled."""

    def __init__(self, spec: ServerSpec, *, emit: EventSink, **_: Any) -> None:
        self.spec = spec
        self.state = "not_started"
        self.error: str | None = None
        self.tool_count = 0
        self.ready = anyio.Event()
        self.done = anyio.Event()
        self.cancelled = False
        self._emit = emit

    def close(self) -> None:
        pass

    async def run(self) -> None:
        try:
            self.state = "connected"
            await self._emit(ServerState(server=self.spec.name, state="connected"))
            self.ready.set()
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            self.cancelled = True
            raise
        finally:
            self.done.set()


async def test_connection_still_running_after_grace_is_cancelled(tmp_path: Path) -> None:
    spec = ServerSpec(name="stuck", type="http", url="http://127.0.0.1:9/mcp")
    session = Session(
        RunPlan(AgentSpec(name="t"), {"stuck": spec}, workspace=tmp_path, state_home=tmp_path),
        close_grace_s=GRACE_S,
        connect=HangingConnection,
    )

    async def body(s: Session) -> str:
        return "done"

    started = time.monotonic()
    with anyio.fail_after(LIMIT_S):
        result = await session.run(body)

    assert result == "done"
    assert time.monotonic() - started < LIMIT_S / 2
    assert session.connections["stuck"].cancelled  # type: ignore[attr-defined]
