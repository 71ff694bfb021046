"""`log prune` removes a pruned session's files with its rows — `sessions/ID/events.jsonl`
(the whole conversation) and its spilled results — and never follows a symlink out of
SUBAGENT_HOME to do it; a session still running is left whole."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from launcher.store import db
from launcher.store.runlock import RunLock, lock_path

OLD = 10.0
"""Started in 1970: older than any --older-than."""


def _row(conn: sqlite3.Connection, sid: str, status: str = "completed") -> None:
    def body() -> None:
        conn.execute(
            "INSERT INTO sessions(id, agent, started, status) VALUES (?, 'a', ?, ?)",
            (sid, OLD, status),
        )

    db.write(conn, body)


def _files(home: Path, sid: str) -> Path:
    """A session's directory as a run leaves it: its events and one spilled result."""
    root = home / "sessions" / sid
    (root / "results").mkdir(parents=True)
    (root / "events.jsonl").write_text('{"type": "session_start"}\n')
    (root / "results" / "call-1.txt").write_text("a large result")
    return root


def _prune(home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "launcher.cli", "log", "prune", "--older-than", "1d", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "SUBAGENT_HOME": str(home)},
        timeout=120,
    )


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, sqlite3.Connection]:
    home = tmp_path / "home"
    conn = db.connect(home)
    assert conn is not None
    return home, conn


def test_prune_removes_the_sessions_files_with_its_rows(
    store: tuple[Path, sqlite3.Connection],
) -> None:
    home, conn = store
    _row(conn, "old")
    gone = _files(home, "old")
    conn.close()

    proc = _prune(home)

    assert proc.returncode == 0, proc.stderr
    assert '"deleted": 1' in proc.stdout
    assert not gone.exists()
    assert (home / "sessions").is_dir()  # only the session's own directory goes


def test_prune_never_follows_a_symlink_out_of_home(
    store: tuple[Path, sqlite3.Connection], tmp_path: Path
) -> None:
    home, conn = store
    outside = tmp_path / "outside"
    (outside / "kept").mkdir(parents=True)
    (outside / "kept" / "file.txt").write_text("not ours")
    _row(conn, "linked")  # the session directory itself is a symlink out
    (home / "sessions").mkdir(parents=True, exist_ok=True)
    (home / "sessions" / "linked").symlink_to(outside / "kept", target_is_directory=True)
    _row(conn, "inner")  # its results folder is a symlink out
    inner = home / "sessions" / "inner"
    inner.mkdir()
    (inner / "results").symlink_to(outside / "kept", target_is_directory=True)
    _row(conn, "../../outside/kept")  # a row whose id climbs out of sessions/
    conn.close()

    proc = _prune(home)

    assert proc.returncode == 0, proc.stderr
    assert '"deleted": 3' in proc.stdout
    assert (outside / "kept" / "file.txt").read_text() == "not ours"
    assert not (home / "sessions" / "linked").is_symlink()
    assert not inner.exists()


def test_prune_leaves_a_running_session_whole(store: tuple[Path, sqlite3.Connection]) -> None:
    home, conn = store
    _row(conn, "live", status="running")
    live = _files(home, "live")
    _row(conn, "dead", status="running")  # its process is gone: interrupted, pruned
    dead = _files(home, "dead")
    conn.close()
    lock = RunLock(lock_path(home, "live"))
    assert lock.acquire()
    try:
        proc = _prune(home)
    finally:
        lock.release()

    assert proc.returncode == 0, proc.stderr
    assert '"deleted": 1' in proc.stdout
    assert (live / "events.jsonl").exists()
    assert not dead.exists()
    conn = db.connect(home)
    assert conn is not None
    assert [r[0] for r in conn.execute("SELECT id FROM sessions")] == ["live"]
    conn.close()
