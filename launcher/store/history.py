"""A stored conversation turned back into model messages, for `spawn --resume`."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from launcher.errors import RunError, UsageError
from launcher.models.base import Message, ToolCall
from launcher.store.db import connect, db_path
from launcher.store.owner import Owner
from launcher.store.query import OWNED_PREFIX_MIN, messages, resolve_id, resolve_owned
from launcher.store.runlock import claim, is_alive, unclaim

INTERRUPTED = "Interrupted: the launcher ended before this call finished; it may not have run."
"""The answer a resume gives a call whose result was never stored (a killed run)."""
NOT_OWNED = (
    "no session this serve started matches `resume`: give a session_id it returned "
    f"(or at least its first {OWNED_PREFIX_MIN} characters), or `last`"
)
"""The one answer for an owner's ref that names none of its sessions: whether no session
matches or another's does is not told (that would let a caller list every id)."""


@dataclass
class StoredSession:
    """What a resume needs: who ran, where, on what model, and the conversation so far."""

    id: str
    agent: str
    model: str | None
    config_dir: str | None
    workspace: str | None
    turns: int
    messages: list[Message] = field(default_factory=list)


def load_resumable(
    home: Path, ref: str, *, run: bool = True, owner: Owner | None = None
) -> StoredSession:
    """The stored session `ref` under `home`, to continue; UsageError if none or still running.

    `run`: this process continues it, so its run lock is taken before the session is read
    and held for the writer (runlock.claim); of several concurrent resumes exactly one
    runs. Without `run` (serve checking a call before a worker runs it) only checked.
    `owner`: only that owner's sessions, by full id or a long enough prefix (NOT_OWNED
    otherwise). RunError if the store cannot be read (damaged, or locked for too long).
    """
    try:
        conn = connect(home, create=False)
        if conn is None:
            raise UsageError(NOT_OWNED if owner else "no stored sessions yet: nothing to resume")
        try:
            session_id = _resolve(conn, ref, owner)
            lock = claim(home, session_id) if run else None
            if (run and lock is None) or (not run and is_alive(home, session_id)):
                raise UsageError(
                    f"session {session_id} is still running; resume it once it has ended"
                )
            try:
                return load_session(conn, session_id)
            except BaseException:
                if lock is not None:
                    unclaim(lock)
                raise
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise RunError(f"session store {db_path(home)}: {exc}") from exc


def _resolve(conn: sqlite3.Connection, ref: str, owner: Owner | None) -> str:
    if owner is None:
        return resolve_id(conn, ref)
    found = resolve_owned(conn, ref, owner)
    if found is None:
        raise UsageError(NOT_OWNED)
    return found


def load_session(conn: sqlite3.Connection, ref: str) -> StoredSession:
    """The session `ref` (an id, a prefix or `last`) with its history; UsageError if none."""
    session_id = resolve_id(conn, ref)
    row = conn.execute(
        "SELECT agent, model, config_dir, workspace, turns FROM sessions WHERE id=?",
        (session_id,),
    ).fetchone()
    history = close_interrupted([_message(m) for m in messages(conn, session_id)])
    return StoredSession(
        id=session_id,
        agent=row["agent"],
        model=row["model"],
        config_dir=row["config_dir"],
        workspace=row["workspace"],
        turns=row["turns"],
        messages=history,
    )


def _message(m: sqlite3.Row) -> Message:
    if m["role"] == "assistant":
        calls = [
            ToolCall(c["id"], c["name"], c.get("arguments") or {})
            for c in json.loads(m["tool_calls"] or "[]")
        ]
        return Message(role="assistant", content=m["content"], tool_calls=calls)
    if m["role"] == "tool":
        return Message(
            role="tool",
            content=m["content"],
            tool_call_id=m["tool_call_id"],
            name=m["name"],
            is_error=bool(m["is_error"]),
        )
    return Message(role="user", content=m["content"])


def close_interrupted(history: list[Message]) -> list[Message]:
    """Every assistant tool call answered right after its message, in call order.

    A killed turn leaves calls without results; providers reject such a history, so
    each gets the INTERRUPTED answer. Stored results are regrouped after their call.
    """
    out: list[Message] = []
    answers = {m.tool_call_id: m for m in history if m.role == "tool"}
    for message in history:
        if message.role == "tool":
            continue  # placed after its call below
        out.append(message)
        for call in message.tool_calls:
            answer = answers.pop(call.id, None)
            out.append(
                answer
                or Message(
                    role="tool",
                    content=INTERRUPTED,
                    tool_call_id=call.id,
                    name=call.name,
                    is_error=True,
                )
            )
    return out
