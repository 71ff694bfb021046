"""Pruning keeps the search index whole: prune, search, prune, search, each checked by FTS5."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from launcher.store import db, query


def _session(conn: sqlite3.Connection, sid: str, started: float, answer: str) -> None:
    """One stored session with one message, indexed as a session's end indexes it."""

    def body() -> None:
        conn.execute(
            "INSERT INTO sessions(id, agent, started, status) VALUES (?, 'a', ?, 'completed')",
            (sid, started),
        )
        conn.execute(
            "INSERT INTO messages(session, turn, role, content, ts)"
            " VALUES (?, 1, 'assistant', ?, 0)",
            (sid, answer),
        )
        db.index_new(conn)

    db.write(conn, body)


def _check_index(conn: sqlite3.Connection) -> None:
    """FTS5's own integrity check, against the messages table it indexes (rank 1)."""
    conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")


def test_sessions_stored_after_a_prune_are_found_and_pruned_again(tmp_path: Path) -> None:
    conn = db.connect(tmp_path)
    assert conn is not None
    _session(conn, "one", 10.0, "first walrus")
    _session(conn, "two", 20.0, "second walrus")

    assert query.prune(conn, older_than_s=0, now=100.0) == 2
    _check_index(conn)
    _session(conn, "three", 200.0, "third walrus")
    _check_index(conn)

    assert [s["id"] for s in query.search(conn, "walrus", 10)] == ["three"]
    assert query.prune(conn, older_than_s=0, now=300.0) == 1
    _check_index(conn)
    _session(conn, "four", 400.0, "fourth walrus")

    assert [s["id"] for s in query.search(conn, "walrus", 10)] == ["four"]
    _check_index(conn)


def test_a_partial_prune_leaves_later_sessions_searchable(tmp_path: Path) -> None:
    conn = db.connect(tmp_path)
    assert conn is not None
    _session(conn, "keep", 50.0, "kept narwhal")
    _session(conn, "drop", 10.0, "dropped narwhal")  # the newest message, the oldest session
    assert query.prune(conn, older_than_s=20, now=60.0) == 1
    _session(conn, "after", 70.0, "later narwhal")

    assert [s["id"] for s in query.search(conn, "narwhal", 10)] == ["after", "keep"]
    _check_index(conn)


def test_a_store_an_older_prune_left_behind_is_repaired_on_open(tmp_path: Path) -> None:
    old = sqlite3.connect(tmp_path / db.DB_NAME, isolation_level=None)
    for step in db.MIGRATIONS[:2]:  # the schema as version 2 shipped it
        for statement in db._statements(step):
            old.execute(statement)
    old.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    old.execute("INSERT INTO schema_version VALUES (2)")
    _session(old, "one", 10.0, "lost beluga")
    # What the old prune left: every message gone, the progress mark past the next ids.
    old.execute("DELETE FROM messages")
    old.execute(
        "INSERT INTO messages(session, turn, role, content, ts)"
        " VALUES ('one', 2, 'user', 'hidden beluga', 0)"
    )
    old.close()

    conn = db.connect(tmp_path)

    assert conn is not None
    assert [s["id"] for s in query.search(conn, "beluga", 10)] == ["one"]
    _check_index(conn)
