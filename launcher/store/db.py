"""Opening `logs.db`: WAL mode, a schema version, and the migration steps applied in order.

Only the stdlib `sqlite3` here: `subagent log` imports this and must stay fast.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

DB_NAME = "logs.db"
BUSY_TIMEOUT_MS = 10_000
"""Another process holding the write lock this long means something is stuck."""

MIGRATIONS: tuple[str, ...] = (
    # 1: sessions, their messages, and the full-text index over what was said.
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        model TEXT,
        config_dir TEXT,
        workspace TEXT,
        started REAL NOT NULL,
        ended REAL,
        status TEXT NOT NULL,
        prompt TEXT,
        result TEXT,
        error TEXT,
        turns INTEGER NOT NULL DEFAULT 0,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        tool_calls INTEGER NOT NULL DEFAULT 0,
        duration_s REAL NOT NULL DEFAULT 0,
        usage TEXT
    );
    CREATE INDEX sessions_started ON sessions(started);
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        session TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL DEFAULT '',
        tool_calls TEXT,
        tool_call_id TEXT,
        name TEXT,
        is_error INTEGER NOT NULL DEFAULT 0,
        ts REAL NOT NULL
    );
    CREATE INDEX messages_session ON messages(session, id);
    CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id');
    CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
    END;
    CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content)
            VALUES ('delete', old.id, old.content);
    END;
    """,
    # 2: the full-text index is filled in batches, not by a trigger per message: one FTS
    # segment per batch instead of one per turn's commit (a third of the store's cost).
    # `fts_progress` says how far it reaches; messages past it are indexed by the next
    # batch (a session's end, or `log -q` / `log prune`, which index whatever is left).
    """
    DROP TRIGGER messages_ai;
    CREATE TABLE fts_progress (indexed_to INTEGER NOT NULL);
    INSERT INTO fts_progress(indexed_to) SELECT coalesce(max(id), 0) FROM messages;
    """,
    # 3: a prune before this version left `indexed_to` past the ids SQLite hands out next
    # (it reuses the ids of deleted top rows), so later messages were never indexed and the
    # next prune's deletes broke the index. Rebuild it from the messages it indexes.
    """
    INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
    UPDATE fts_progress SET indexed_to = (SELECT coalesce(max(id), 0) FROM messages);
    """,
    # 4: how deep a session ran in a tree of nested sub-agents (0: a user or a host started
    # it), so `last` names what the user started, never a child that happened to end later.
    """
    ALTER TABLE sessions ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
    """,
    # 5: who started a session through serve (owner.py): serve resumes only its own. NULL
    # for a user's own runs, and for every session stored before this step.
    """
    ALTER TABLE sessions ADD COLUMN owner_serve TEXT;
    ALTER TABLE sessions ADD COLUMN owner_caller TEXT;
    """,
)
"""Step N brings the schema from version N-1 to N; never edit a shipped step, append one."""

SCHEMA_VERSION = len(MIGRATIONS)


def db_path(home: Path) -> Path:
    return home / DB_NAME


def connect(home: Path, *, create: bool = True, shared: bool = False) -> sqlite3.Connection | None:
    """The store at `home/logs.db`, migrated to SCHEMA_VERSION; None if absent and not `create`.

    `shared`: usable from any thread (the caller serialises its use).
    """
    path = db_path(home)
    if not path.exists():
        if not create:
            return None
        home.mkdir(parents=True, exist_ok=True)
        # Created 0600 before sqlite opens it: prompts and results may be private.
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    conn = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=not shared
    )
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    _into_wal(conn)
    # NORMAL in WAL mode survives a killed process; only a power cut may lose the last commit.
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    migrate(conn)
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(OSError):
            os.chmod(str(path) + suffix, 0o600)
    return conn


def _into_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL, waiting out other processes as long as any write would wait.

    SQLite answers a journal-mode change on a new, empty database with "locked" at once,
    without its busy handler, when another process opens it at the same moment: two
    first sessions starting together lost one's whole store record.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def migrate(conn: sqlite3.Connection) -> int:
    """Apply every migration step past the db's version, each in its own transaction."""
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    version = row[0] if row else 0
    if version >= SCHEMA_VERSION:
        return version
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Re-read under the write lock: another process may have migrated meanwhile.
        row = conn.execute("SELECT version FROM schema_version").fetchone()
        version = row[0] if row else 0
        for step in MIGRATIONS[version:]:
            for statement in _statements(step):
                conn.execute(statement)
        conn.execute("DELETE FROM schema_version")
        conn.execute("INSERT INTO schema_version(version) VALUES (?)", (SCHEMA_VERSION,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return SCHEMA_VERSION


def index_new(conn: sqlite3.Connection) -> int:
    """Add every message past `fts_progress` to the full-text index; how many were added.

    Runs inside the caller's write transaction: with the write lock held, every message
    id is committed, and ids grow in commit order, so the indexed messages stay a prefix.
    """
    (done,) = conn.execute("SELECT indexed_to FROM fts_progress").fetchone()
    (top,) = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()
    if top <= done:
        return 0
    conn.execute(
        "INSERT INTO messages_fts(rowid, content)"
        " SELECT id, content FROM messages WHERE id > ? AND id <= ?",
        (done, top),
    )
    conn.execute("UPDATE fts_progress SET indexed_to=?", (top,))
    return int(top - done)


def write(conn: sqlite3.Connection, body: Callable[[], T]) -> T:
    """Run `body` in one write transaction (BEGIN IMMEDIATE ... COMMIT, rolled back on error)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        out = body()
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
    return out


def _statements(script: str) -> list[str]:
    """Split a step into statements; a trigger body's `;` stays inside its statement."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
