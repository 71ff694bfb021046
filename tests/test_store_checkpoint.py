"""The WAL is checkpointed at a session's end on a thread of its own, not in a turn's commit."""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from launcher.events import (
    AgentEnd,
    AgentStart,
    AssistantMessage,
    RunStatus,
    SessionEnd,
    SessionStart,
    ToolResultEvent,
    TurnEnd,
    UserMessage,
)
from launcher.runtime import Runtime
from launcher.store import checkpoint
from launcher.store.db import DB_NAME
from launcher.store.sink import StoreSink

pytestmark = pytest.mark.anyio

JOIN_LIMIT_S = 30.0
"""Bounds the wait for the checkpoint's thread; it takes milliseconds."""


async def _run_session(home: Path, session_id: str) -> None:
    """One stored session: a prompt, a turn with one call and its result, a final answer."""
    sink = StoreSink(home, workspace=home, config_dir=None)
    call = {"id": "c1", "name": "s__echo", "arguments": {"text": "x"}}
    for event in (
        SessionStart(agent="a", session_id=session_id),
        AgentStart(model="scripted:x"),
        UserMessage(turn=1, content="find the walrus"),
        AssistantMessage(turn=1, text="", tool_calls=[call]),
        ToolResultEvent(turn=1, id="c1", name="s__echo", is_error=False, content="a walrus"),
        TurnEnd(turn=1),
        AssistantMessage(turn=2, text="found it"),
        TurnEnd(turn=2),
        AgentEnd(status=RunStatus.COMPLETED, result="found it"),
        SessionEnd(),
    ):
        await sink(event)


def _indexed(home: Path) -> tuple[int, int]:
    """(messages indexed for search, messages stored)."""
    conn = sqlite3.connect(home / DB_NAME)
    try:
        (done,) = conn.execute("SELECT indexed_to FROM fts_progress").fetchone()
        (top,) = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()
        return done, top
    finally:
        conn.close()


def _in_db_file(home: Path, session_id: str, copy_to: Path) -> bool:
    """Whether `logs.db` itself, without its WAL, holds the session's row (a checkpoint ran)."""
    copy_to.mkdir()
    shutil.copy(home / DB_NAME, copy_to / DB_NAME)
    conn = sqlite3.connect(copy_to / DB_NAME)
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name='sessions'").fetchone() is None:
            return False  # not even the schema has left the WAL yet
        row = conn.execute("SELECT 1 FROM sessions WHERE id=?", (session_id,)).fetchone()
        return row is not None
    finally:
        conn.close()


async def test_a_due_session_end_leaves_checkpoint_and_index_to_a_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Runtime
) -> None:
    monkeypatch.setattr(checkpoint, "CHECKPOINT_COMMITS", 1)
    started: list[Path] = []
    monkeypatch.setattr(
        checkpoint, "start", lambda home, held: started.append(home)
    )  # held back: run by hand below
    home = tmp_path / "home"

    await _run_session(home, "s1")

    assert started == [home]
    done, top = _indexed(home)
    assert done < top  # the session's end committed its rows but left the index batch
    assert not _in_db_file(home, "s1", tmp_path / "before")  # and the checkpoint

    checkpoint._checkpoint(home, runtime.store)

    assert _indexed(home) == (top, top)
    assert _in_db_file(home, "s1", tmp_path / "after")
    conn = sqlite3.connect(home / DB_NAME)
    hits = conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'walrus'")
    assert len(hits.fetchall()) == 2  # the prompt and the tool result
    conn.close()


async def test_the_checkpoint_runs_on_a_thread_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoint, "CHECKPOINT_COMMITS", 1)
    threads: list[threading.Thread] = []
    real_start = checkpoint.start
    monkeypatch.setattr(
        checkpoint, "start", lambda home, held: threads.append(real_start(home, held))
    )
    home = tmp_path / "home"

    await _run_session(home, "s1")

    (thread,) = threads
    assert thread is not threading.current_thread() and thread.daemon
    thread.join(JOIN_LIMIT_S)
    assert not thread.is_alive()
    done, top = _indexed(home)
    assert done == top > 0
    assert _in_db_file(home, "s1", tmp_path / "copy")


async def test_a_session_end_before_a_checkpoint_is_due_indexes_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoint, "CHECKPOINT_COMMITS", 10**6)
    started: list[Path] = []
    monkeypatch.setattr(checkpoint, "start", lambda home, held: started.append(home))
    home = tmp_path / "home"

    await _run_session(home, "s1")

    assert started == []
    done, top = _indexed(home)
    assert done == top > 0


def test_commits_add_up_over_sessions_until_a_checkpoint_is_due(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Runtime
) -> None:
    monkeypatch.setattr(checkpoint, "CHECKPOINT_COMMITS", 10)
    home = tmp_path / "home"
    assert not checkpoint.due(home, 6, runtime.store)
    assert checkpoint.due(home, 6, runtime.store)  # 12 since the last one
    assert not checkpoint.due(
        home, 2, runtime.store
    )  # one is running: never two at once; these 2 count on
    checkpoint._checkpoint(
        home, runtime.store
    )  # no store there: dropped, and the slot is free again
    assert not checkpoint.due(home, 7, runtime.store)  # 9 since the last one
    assert checkpoint.due(home, 1, runtime.store)
    checkpoint._checkpoint(home, runtime.store)
