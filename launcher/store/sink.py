"""The store as an event sink: each session's rows, written as its events arrive.

Rows are buffered and committed in one short transaction at each boundary (a prompt,
the model's reply, a turn's end, the agent's end), so a SIGKILL loses at most the tool
results of the turn in flight, and no write lock is held while tools run.

Sinks of one process share one connection per store, kept open: closing the last
connection to a WAL database checkpoints it (an fsync, about half of a short session's
store cost); left open, the WAL is checkpointed at a session's end on a thread of its
own (checkpoint.py), with SQLite's autocheckpoint as the backstop.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from launcher import runtime
from launcher.events import (
    AgentEnd,
    AgentStart,
    AssistantMessage,
    Event,
    RunStatus,
    SessionEnd,
    SessionStart,
    ToolResultEvent,
    TurnEnd,
    UserMessage,
)
from launcher.store import checkpoint
from launcher.store.db import connect, db_path, index_new, write
from launcher.store.owner import Owner
from launcher.store.runlock import RunLock, lock_path, take_claimed

Write = tuple[str, tuple[Any, ...]]


def shared_connection(home: Path, held: runtime.Store) -> sqlite3.Connection:
    """This process's connection to the store at `home`, opened (and migrated) on first use."""
    with held.writing:
        conn = held.connections.get(home)
        if conn is None:
            conn = connect(home, shared=True)
            assert conn is not None
            held.connections[home] = conn
        return conn


def forget_connection(home: Path, held: runtime.Store) -> None:
    """Drop a connection that failed, so the next session opens a fresh one."""
    with held.writing:
        conn = held.connections.pop(home, None)
    if conn is not None:
        with contextlib.suppress(sqlite3.Error):
            conn.close()


class StoreSink:
    """Writes one session's events to `logs.db`; never raises into the session."""

    def __init__(
        self,
        home: Path,
        *,
        workspace: Path,
        config_dir: Path | None,
        depth: int = 0,
        owner: Owner | None = None,
        held: runtime.Store | None = None,
    ) -> None:
        self.home = home
        # The run's runtime's store state: claimed locks, checkpoint counts, the connection.
        self._held = runtime.current().store if held is None else held
        self.workspace = str(workspace)
        self.config_dir = str(config_dir) if config_dir else None
        self.depth = depth  # 0: started by a user or host; n: a sub-agent's child, n deep
        self.owner = owner  # a new session's starter through serve (None: a user's run)
        self._conn: sqlite3.Connection | None = None
        self._pending: list[Write] = []
        self._session: str | None = None
        # Seconds stored by earlier processes (a resume), and when this process's run began.
        self._base_duration = 0.0
        self._run_start: float | None = None
        self._broken = False
        self._start: SessionStart | None = None
        self._lock: RunLock | None = None
        self._commits = 0  # this session's transactions, counted toward the next checkpoint

    async def __call__(self, event: Event) -> None:
        # Most events (deltas, calls, server states) write nothing: leave before any work.
        handler = _HANDLERS.get(type(event))
        if handler is None or self._broken:
            return
        try:
            handler(self, event)
        except (sqlite3.Error, OSError) as exc:
            # A broken store must not end the run: events.jsonl is still the raw record.
            self._broken = True
            sys.stderr.write(
                f"subagent: warning: the session store {db_path(self.home)} could not be"
                f" written ({exc}): `subagent log` misses this session; its events.jsonl"
                " keeps it\n"
            )
            if self._conn is not None:
                forget_connection(self.home, self._held)
            self._close()

    def _on_session_start(self, e: SessionStart) -> None:
        self._start = e

    def _on_agent_start(self, e: AgentStart) -> None:
        # Opened at the first agent run, so `tools`, `check` and `lock` sessions leave no row.
        if self._conn is None:
            self._open(e)
        if self._run_start is None:
            self._run_start = e.ts
        self._pending.append(("UPDATE sessions SET model=? WHERE id=?", (e.model, self._session)))

    def _open(self, e: AgentStart) -> None:
        start = self._start
        if start is None:
            return
        # Held while this process writes the session: `log` tells a live run from a killed one.
        # A resume took the lock when it loaded the session (no second writer between).
        path = lock_path(self.home, start.session_id)
        self._lock = take_claimed(path, self._held) or RunLock(path)
        if not self._lock.acquire():
            self._broken = True  # another live process writes this session; never interleave
            return
        self._conn = shared_connection(self.home, self._held)
        self._session = start.session_id
        assert self._conn is not None
        row = self._conn.execute(
            "SELECT duration_s FROM sessions WHERE id=?", (start.session_id,)
        ).fetchone()
        if row is not None:  # a resume in a new process continues the same record
            self._base_duration = float(row[0])
            self._pending.append(
                ("UPDATE sessions SET status='running', ended=NULL WHERE id=?", (self._session,))
            )
        else:
            owner = self.owner
            self._pending.append(
                (
                    "INSERT INTO sessions(id, agent, config_dir, workspace, started, status,"
                    " depth, owner_serve, owner_caller) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                    (
                        self._session,
                        start.agent,
                        self.config_dir,
                        self.workspace,
                        start.ts,
                        self.depth,
                        owner.serve if owner is not None else None,
                        owner.caller if owner is not None else None,
                    ),
                )
            )

    def _on_user(self, e: UserMessage) -> None:
        self._message(e.turn, "user", e.content, e.ts)
        self._pending.append(
            (
                "UPDATE sessions SET prompt=? WHERE id=? AND prompt IS NULL",
                (e.content, self._session),
            )
        )
        self._flush()

    def _on_assistant(self, e: AssistantMessage) -> None:
        # Tokens and calls are counted as each reply is committed: a killed run keeps them.
        calls = json.dumps(e.tool_calls, ensure_ascii=False, default=str) if e.tool_calls else None
        self._message(e.turn, "assistant", e.text, e.ts, tool_calls=calls)
        self._pending.append(
            (
                "UPDATE sessions SET turns=max(turns, ?), input_tokens=input_tokens+?,"
                " output_tokens=output_tokens+?, tool_calls=tool_calls+? WHERE id=?",
                (
                    e.turn,
                    int(e.usage.get("input_tokens", 0)),
                    int(e.usage.get("output_tokens", 0)),
                    len(e.tool_calls),
                    self._session,
                ),
            )
        )
        self._flush()

    def _on_tool_result(self, e: ToolResultEvent) -> None:
        self._message(
            e.turn, "tool", e.content, e.ts, tool_call_id=e.id, name=e.name, is_error=e.is_error
        )

    def _on_turn_end(self, e: TurnEnd) -> None:
        self._pending.append(
            ("UPDATE sessions SET duration_s=? WHERE id=?", (self._duration(e.ts), self._session))
        )
        self._flush()

    def _duration(self, now: float) -> float:
        """Seconds over every process's run of this session, up to `now`."""
        return round(self._base_duration + now - (self._run_start or now), 3)

    def _on_agent_end(self, e: AgentEnd) -> None:
        self._pending.append(
            (
                "UPDATE sessions SET status=?, result=?, error=?, duration_s=?, usage=? WHERE id=?",
                (
                    e.status,
                    e.result,
                    e.error,
                    self._duration(e.ts),
                    json.dumps(e.usage),
                    self._session,
                ),
            )
        )
        self._flush()

    def _on_session_end(self, e: SessionEnd) -> None:
        self._pending.append(
            (
                "UPDATE sessions SET ended=?, status=CASE WHEN status='running'"
                " THEN ? ELSE status END, error=coalesce(error, ?) WHERE id=?",
                (e.ts, RunStatus.ERROR if e.error else RunStatus.ENDED, e.error, self._session),
            )
        )
        # When a checkpoint is due, its thread indexes this session's messages after it.
        background = self._conn is not None and checkpoint.due(
            self.home, self._commits + 1, self._held
        )
        try:
            self._flush(index=not background)
        finally:
            self._close()
            if background:
                checkpoint.start(self.home, self._held)

    def _message(self, turn: int, role: str, content: str, ts: float, **extra: Any) -> None:
        self._pending.append(
            (
                _insert_message(tuple(extra)),
                (self._session, turn, role, content, ts, *extra.values()),
            )
        )

    def _flush(self, *, index: bool = False) -> None:
        """Commit what is pending in one transaction; `index` also brings the search index up."""
        if self._conn is None or not (self._pending or index):
            return
        conn = self._conn
        writes, self._pending = self._pending, []

        def body() -> None:
            for sql, args in writes:
                conn.execute(sql, args)
            if index:
                index_new(conn)

        with self._held.writing:
            write(conn, body)
        self._commits += 1

    def _close(self) -> None:
        self._conn = None  # the shared connection stays open for the next session
        if self._lock is not None:
            self._lock.release()
            self._lock = None


_HANDLERS: dict[type, Callable[[StoreSink, Any], None]] = {
    SessionStart: StoreSink._on_session_start,
    AgentStart: StoreSink._on_agent_start,
    UserMessage: StoreSink._on_user,
    AssistantMessage: StoreSink._on_assistant,
    ToolResultEvent: StoreSink._on_tool_result,
    TurnEnd: StoreSink._on_turn_end,
    AgentEnd: StoreSink._on_agent_end,
    SessionEnd: StoreSink._on_session_end,
}
"""The events that write rows; every other event passes the sink untouched."""


@functools.cache
def _insert_message(extra: tuple[str, ...]) -> str:
    """The INSERT for a message with these optional columns (a handful of shapes in all)."""
    cols = ("session", "turn", "role", "content", "ts", *extra)
    return f"INSERT INTO messages({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
