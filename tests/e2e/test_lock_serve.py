"""`subagent serve` workers enforce the lock too; `serve --no-lock` passes it to them."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from launcher.check.pins import AgentPin, Lock, ToolPin, write_lock
from tests.e2e.conftest import parse_events
from tests.e2e.test_serve import LIMIT_S, serve

pytestmark = pytest.mark.e2e


def pin_echo_with_a_stale_description(config: Path) -> None:
    """A lock whose echo pin no longer matches (and which pins no sleep)."""
    stale = ToolPin("lazy__echo", "lazy", "echo", "0" * 64, "0" * 64)
    write_lock(
        config / "subagent.lock.json", Lock({"general-purpose": AgentPin({stale.name: stale})})
    )


def worker_events(tmp_path: Path) -> list[dict]:
    (record,) = (tmp_path / "state" / "sessions").glob("*/events.jsonl")
    return parse_events(record.read_text())


@pytest.mark.anyio
@pytest.mark.parametrize("no_lock", [False, True])
async def test_a_serve_worker_mutes_tools_off_the_lock(tmp_path: Path, no_lock: bool) -> None:
    pin_echo_with_a_stale_description(tmp_path / "cfg")
    extra = ("--no-lock",) if no_lock else ()
    with anyio.fail_after(LIMIT_S):
        async with serve(tmp_path, *extra) as client:
            result = await client.call_tool(
                "spawn_subagent",
                {"prompt": "go", "ext": ["lazy"], "model": f"scripted:{tmp_path / 'quick.yaml'}"},
            )
            assert not result.is_error
    events = worker_events(tmp_path)
    (turn1,) = [e for e in events if e["type"] == "turn_start" and e["turn"] == 1]
    (echo,) = [e for e in events if e["type"] == "tool_result" and e["name"] == "lazy__echo"]
    if no_lock:
        assert {"lazy__echo", "lazy__sleep"} <= set(turn1["tools"])
        assert echo["is_error"] is False
    else:
        assert not any(name.startswith("lazy__") for name in turn1["tools"])
        assert echo["is_error"] is True
