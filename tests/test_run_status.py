"""Issue 22.2: one RunStatus enum; every shape that carries a status is unchanged by it.

A StrEnum is its value in JSON, SQLite and text: `agent_end`, a worker's state, the
store's row and a batch result line read exactly as the bare strings did.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from launcher.backend.protocol import RunState
from launcher.config.expect import RUN_STATUSES
from launcher.engines.base import TaskEnd
from launcher.events import AgentEnd, AgentStart, RunStatus, SessionEnd, SessionStart
from launcher.store.sink import StoreSink

pytestmark = pytest.mark.anyio


def test_the_final_statuses_are_the_contracts_eight() -> None:
    assert RUN_STATUSES == (
        "completed",
        "error",
        "max_turns",
        "stopped",
        "max_tokens",
        "max_cost",
        "timeout",
        "idle_timeout",
    )
    assert {s for s in RunStatus if s.final} == set(RUN_STATUSES)
    assert [s for s in RunStatus if s.ok] == [RunStatus.COMPLETED]


def test_events_and_result_lines_serialise_as_the_bare_strings() -> None:
    end = AgentEnd(status=RunStatus.MAX_TURNS, result="r", ts=1.0)
    assert json.loads(end.to_json())["status"] == "max_turns"
    assert '"status": "max_turns"' in end.to_json()
    line = json.dumps(TaskEnd(id="t", status=RunStatus.ERROR).to_dict())
    assert '"status": "error"' in line


def test_a_workers_status_is_parsed_and_an_unknown_one_is_an_error() -> None:
    state = RunState()
    assert state.status is RunStatus.QUEUED and not state.final
    state.observe({"type": "agent_end", "status": "stopped"})
    assert state.status is RunStatus.STOPPED and state.final
    other = RunState()
    other.observe({"type": "agent_end", "status": "exploded"})
    assert other.status is RunStatus.ERROR


async def test_the_store_keeps_the_plain_text(tmp_path: Path) -> None:
    sink = StoreSink(tmp_path, workspace=tmp_path, config_dir=None)
    await sink(SessionStart(agent="a", session_id="s1"))
    await sink(AgentStart(model="scripted:x"))
    await sink(AgentEnd(status=RunStatus.COMPLETED, result="done"))
    await sink(SessionEnd())
    conn = sqlite3.connect(tmp_path / "logs.db")
    row = conn.execute("SELECT status, typeof(status) FROM sessions WHERE id='s1'").fetchone()
    assert row == ("completed", "text")


def test_a_second_agent_end_does_not_replace_the_first() -> None:
    """The worker ends its run once; a line after that (written into a held copy of its
    channel before the stream was cut) cannot change what the caller is told."""
    state = RunState(status="running")
    state.observe({"type": "agent_end", "status": "completed", "result": "honest"})
    state.observe({"type": "agent_end", "status": "completed", "result": "FORGED"})
    state.observe({"type": "agent_end", "status": "error", "error": "forged"})
    assert (state.status, state.result, state.error) == (RunStatus.COMPLETED, "honest", None)
