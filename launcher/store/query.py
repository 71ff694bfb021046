"""Reading the store: recent sessions, one conversation, search, usage totals, pruning.

Stdlib only (`subagent log` must start fast); rows come back as plain dicts, the
shapes CONTRACT.md lists under `subagent log --json`.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from launcher.errors import UsageError
from launcher.events import RunStatus
from launcher.store.db import index_new, write
from launcher.store.owner import Owner

COST = "json_extract(usage, '$.cost_usd')"
"""A session's own cost in USD, from its `agent_end` usage (null: running, or unpriced)."""
LIST_COLUMNS = (
    "id, agent, model, status, turns, input_tokens, output_tokens, tool_calls,"
    f" duration_s, started, ended, prompt, {COST} AS cost_usd"
)


def resolve_id(conn: sqlite3.Connection, ref: str) -> str:
    """`last`, a full id, or a unique id prefix: the session id; UsageError otherwise.

    `last` is the newest session a user (or host) started: a nested sub-agent's is never it.
    """
    if ref == "last":
        row = conn.execute(
            "SELECT id FROM sessions WHERE depth = 0 ORDER BY started DESC, id DESC LIMIT 1"
        ).fetchone()
        if row is None:
            raise UsageError("no stored sessions yet")
        return str(row[0])
    rows = conn.execute(
        "SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 2",
        (ref, ref + "\uffff"),
    ).fetchall()
    exact = [r[0] for r in rows if r[0] == ref]
    if exact:
        return str(exact[0])
    if len(rows) == 1:
        return str(rows[0][0])
    if not rows:
        raise UsageError(f"no stored session {ref!r} (see `subagent log`)")
    raise UsageError(f"session id {ref!r} is ambiguous; give more of it")


OWNED_PREFIX_MIN = 8
"""The shortest id prefix an owner may name a session by: a shorter one would let a caller
walk the id space a character at a time."""


def resolve_owned(conn: sqlite3.Connection, ref: str, owner: Owner) -> str | None:
    """The id of `owner`'s session that `ref` names (its full id, or a prefix of at least
    OWNED_PREFIX_MIN characters unique among `owner`'s sessions); None when it names none
    of them, whether no session matches or only another's does. UsageError if ambiguous."""
    if len(ref) < OWNED_PREFIX_MIN:
        return None
    rows = conn.execute(
        "SELECT id FROM sessions WHERE owner_serve = ? AND owner_caller IS ?"
        " AND id >= ? AND id < ? ORDER BY id LIMIT 2",
        (owner.serve, owner.caller, ref, ref + "\uffff"),
    ).fetchall()
    ids = [str(r[0]) for r in rows]
    if ref in ids or len(ids) == 1:
        return ref if ref in ids else ids[0]
    if ids:
        raise UsageError(f"session id {ref!r} is ambiguous; give more of it")
    return None


def session_row(row: sqlite3.Row) -> dict[str, Any]:
    """One `log --json` list entry."""
    return {
        "id": row["id"],
        "agent": row["agent"],
        "model": row["model"],
        "status": row["status"],
        "turns": row["turns"],
        "input_tokens": row["input_tokens"],
        "output_tokens": row["output_tokens"],
        "tool_calls": row["tool_calls"],
        "duration_s": row["duration_s"],
        "started": row["started"],
        "ended": row["ended"],
        "prompt": row["prompt"] or "",
        "cost_usd": row["cost_usd"],
    }


def recent(conn: sqlite3.Connection, limit: int) -> list[dict[str, Any]]:
    """The newest `limit` sessions, newest first."""
    rows = conn.execute(
        f"SELECT {LIST_COLUMNS} FROM sessions ORDER BY started DESC, id DESC LIMIT ?", (limit,)
    ).fetchall()
    return [session_row(r) for r in rows]


def search(conn: sqlite3.Connection, text: str, limit: int) -> list[dict[str, Any]]:
    """Sessions whose prompts, answers or tool results match `text` (FTS5), newest first.

    Each row carries `match`: a snippet of the session's first matching message. Snippets
    are made for the listed sessions only (a common word matches every session).
    """
    query = _fts_query(text)
    if not query:
        return []
    write(conn, lambda: index_new(conn))  # what running or killed sessions left unindexed
    rows = conn.execute(
        f"SELECT {LIST_COLUMNS} FROM sessions WHERE id IN ("
        " SELECT m.session FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid"
        " WHERE messages_fts MATCH ?) ORDER BY started DESC, id DESC LIMIT ?",
        (query, limit),
    ).fetchall()
    out = []
    for row in rows:
        snip = conn.execute(
            "SELECT snippet(messages_fts, 0, '[', ']', '…', 12) FROM messages_fts"
            " WHERE messages_fts MATCH ? AND rowid IN (SELECT id FROM messages WHERE session=?)"
            " ORDER BY rowid LIMIT 1",
            (query, row["id"]),
        ).fetchone()
        out.append({**session_row(row), "match": snip[0] if snip else ""})
    return out


def _fts_query(text: str) -> str:
    """Each word quoted: the user's text is searched for, never parsed as FTS syntax."""
    words = [w.replace('"', '""') for w in text.split()]
    return " ".join(f'"{w}"' for w in words if w)


def conversation(conn: sqlite3.Connection, session_id: str) -> dict[str, Any]:
    """One session with every message in order (`log ID --json`)."""
    row = conn.execute(
        f"SELECT {LIST_COLUMNS}, config_dir, workspace, result, error FROM sessions WHERE id=?",
        (session_id,),
    ).fetchone()
    if row is None:
        raise UsageError(f"no stored session {session_id!r}")
    out = session_row(row)
    out.update(
        config_dir=row["config_dir"],
        workspace=row["workspace"],
        result=row["result"] or "",
        error=row["error"],
        messages=[message_row(m) for m in messages(conn, session_id)],
    )
    return out


def messages(conn: sqlite3.Connection, session_id: str) -> list[sqlite3.Row]:
    return conn.execute(
        "SELECT turn, role, content, tool_calls, tool_call_id, name, is_error, ts"
        " FROM messages WHERE session=? ORDER BY id",
        (session_id,),
    ).fetchall()


def message_row(m: sqlite3.Row) -> dict[str, Any]:
    """One message of `log ID --json`: fields by role, absent ones left out."""
    out: dict[str, Any] = {"turn": m["turn"], "role": m["role"], "content": m["content"]}
    if m["role"] == "assistant":
        out["tool_calls"] = json.loads(m["tool_calls"]) if m["tool_calls"] else []
    if m["role"] == "tool":
        out.update(tool_call_id=m["tool_call_id"], name=m["name"], is_error=bool(m["is_error"]))
    out["ts"] = m["ts"]
    return out


def usage_by_model(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Token, cost and duration totals per agent and model across every stored session
    (`log --usage`); a nested sub-agent's session counts under its own agent. `cost_usd`
    sums the priced sessions (null when none was)."""
    rows = conn.execute(
        "SELECT agent, coalesce(model, '') AS model, count(*) AS sessions, sum(turns) AS turns,"
        " sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,"
        " sum(tool_calls) AS tool_calls, round(sum(duration_s), 3) AS duration_s,"
        f" round(sum({COST}), 8) AS cost_usd"
        " FROM sessions GROUP BY agent, model"
        " ORDER BY sum(input_tokens + output_tokens) DESC, agent, model"
    ).fetchall()
    return [dict(r) for r in rows]


def prune(conn: sqlite3.Connection, older_than_s: float, now: float | None = None) -> int:
    """Delete sessions started more than `older_than_s` ago (their messages too); the count."""
    return len(prune_ids(conn, older_than_s, now))


def prune_ids(
    conn: sqlite3.Connection,
    older_than_s: float,
    now: float | None = None,
    *,
    running: Callable[[str], bool] | None = None,
) -> list[str]:
    """Delete the rows of sessions started more than `older_than_s` ago, but of one stored as
    running that `running(id)` says still is; the ids deleted."""
    cutoff = (time.time() if now is None else now) - older_than_s

    def delete() -> list[str]:
        # The index's delete trigger needs each deleted message indexed: catch up first.
        index_new(conn)
        rows = conn.execute("SELECT id, status FROM sessions WHERE started < ?", (cutoff,))
        ids = [
            sid
            for sid, status in rows.fetchall()
            if not (status == RunStatus.RUNNING and running is not None and running(sid))
        ]
        conn.executemany("DELETE FROM messages WHERE session=?", [(i,) for i in ids])
        conn.executemany("DELETE FROM sessions WHERE id=?", [(i,) for i in ids])
        # SQLite reuses the ids of deleted top rows: the mark must not stay above the next id,
        # or the messages given those ids are never indexed. Every remaining one is indexed.
        conn.execute(
            "UPDATE fts_progress SET indexed_to=(SELECT coalesce(max(id), 0) FROM messages)"
        )
        return ids

    return write(conn, delete)


DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str) -> float:
    """`30d`, `12h`, `90m`, `2w`, `45s`: seconds; UsageError naming the value otherwise."""
    value, unit = text[:-1], text[-1:].lower()
    if unit not in DURATION_UNITS or not value.isdigit():
        raise UsageError(f"--older-than {text!r}: expected a number and s, m, h, d or w (30d)")
    return int(value) * DURATION_UNITS[unit]
