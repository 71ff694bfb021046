"""The store's schema: migrations from an older db, batched full-text indexing, pruning."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from launcher.store import db, query


def _old_db(home: Path) -> None:
    """A logs.db as schema version 1 left it: one session, indexed by the old trigger."""
    home.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(home / db.DB_NAME, isolation_level=None)
    for statement in db._statements(db.MIGRATIONS[0]):
        conn.execute(statement)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version VALUES (1)")
    _session(conn, "old", 100.0, "the old answer mentions walrus")
    conn.close()


def _session(conn: sqlite3.Connection, sid: str, started: float, answer: str) -> None:
    conn.execute(
        "INSERT INTO sessions(id, agent, started, status) VALUES (?, 'a', ?, 'completed')",
        (sid, started),
    )
    conn.execute(
        "INSERT INTO messages(session, turn, role, content, ts) VALUES (?, 1, 'assistant', ?, 0)",
        (sid, answer),
    )


def test_an_old_db_is_migrated_and_its_index_kept(tmp_path: Path) -> None:
    _old_db(tmp_path)

    conn = db.connect(tmp_path)

    assert conn is not None
    assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == db.SCHEMA_VERSION
    assert [s["id"] for s in query.search(conn, "walrus", 10)] == ["old"]


def test_new_messages_are_found_once_indexed_and_search_indexes_what_is_left(
    tmp_path: Path,
) -> None:
    conn = db.connect(tmp_path)
    assert conn is not None
    _session(conn, "s1", 1.0, "alpha narwhal")
    _session(conn, "s2", 2.0, "beta narwhal")
    matched = "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'narwhal'"
    assert conn.execute(matched).fetchone()[0] == 0

    found = query.search(conn, "narwhal", 10)  # a killed session left these unindexed

    assert [s["id"] for s in found] == ["s2", "s1"]
    assert db.write(conn, lambda: db.index_new(conn)) == 0  # nothing twice


def test_prune_deletes_unindexed_messages_without_breaking_the_index(tmp_path: Path) -> None:
    conn = db.connect(tmp_path)
    assert conn is not None
    _session(conn, "old", 10.0, "ancient kraken")
    _session(conn, "new", 1000.0, "fresh kraken")

    assert query.prune(conn, older_than_s=100, now=1050.0) == 1

    conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")
    assert [s["id"] for s in query.search(conn, "kraken", 10)] == ["new"]
    assert query.search(conn, "ancient", 10) == []


def test_usage_totals_tokens_calls_and_time_per_model_across_sessions(tmp_path: Path) -> None:
    import io

    from launcher.cli.render import print_usage

    conn = db.connect(tmp_path)
    assert conn is not None
    for sid, model, tokens in (("a", "m:big", 100), ("b", "m:big", 50), ("c", "m:small", 7)):
        conn.execute(
            "INSERT INTO sessions(id, agent, model, started, status, turns, input_tokens,"
            " output_tokens, tool_calls, duration_s) VALUES (?, 'x', ?, 0, 'completed', 2, ?,"
            " 1, 3, 1.5)",
            (sid, model, tokens),
        )

    rows = query.usage_by_model(conn)
    out = io.StringIO()
    print_usage(rows, out)

    assert rows == [
        {"agent": "x", "model": "m:big", "sessions": 2, "turns": 4, "input_tokens": 150,
         "output_tokens": 2, "tool_calls": 6, "duration_s": 3.0, "cost_usd": None},
        {"agent": "x", "model": "m:small", "sessions": 1, "turns": 2, "input_tokens": 7,
         "output_tokens": 1, "tool_calls": 3, "duration_s": 1.5, "cost_usd": None},
    ]  # fmt: skip
    header, big, small = out.getvalue().splitlines()
    assert header.split() == [
        "AGENT",
        "MODEL",
        "SESSIONS",
        "TURNS",
        "INPUT",
        "OUTPUT",
        "TOOL_CALLS",
        "SECONDS",
        "COST_USD",
    ]
    assert big.split() == ["x", "m:big", "2", "4", "150", "2", "6", "3.0", "?"]
    assert header.index("INPUT") == big.index("150") == small.index("7")  # aligned columns
