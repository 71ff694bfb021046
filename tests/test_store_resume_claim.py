"""A resume takes the session's run lock when it loads it; `last` is what a user started."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from launcher.errors import UsageError
from launcher.runtime import Runtime
from launcher.store import db, query, runlock
from launcher.store.history import load_resumable


def _session(conn: sqlite3.Connection, sid: str, started: float, depth: int = 0) -> None:
    conn.execute(
        "INSERT INTO sessions(id, agent, started, status, depth)"
        " VALUES (?, 'a', ?, 'completed', ?)",
        (sid, started, depth),
    )


@pytest.fixture
def home(tmp_path: Path, runtime: Runtime) -> Iterator[Path]:
    conn = db.connect(tmp_path)
    assert conn is not None
    _session(conn, "s-1", 1.0)
    conn.close()
    yield tmp_path
    for lock in list(runtime.store.claimed.values()):  # a test's claims never outlive it
        runlock.unclaim(lock)


def test_two_resumes_that_load_the_same_session_cannot_both_run(home: Path) -> None:
    first = load_resumable(home, "s-1")

    with pytest.raises(UsageError, match="s-1 is still running"):
        load_resumable(home, "s-1")
    assert first.id == "s-1"


def test_the_writer_adopts_the_claimed_lock_and_its_end_frees_the_session(
    home: Path, runtime: Runtime
) -> None:
    load_resumable(home, "s-1")
    lock = runlock.take_claimed(runlock.lock_path(home, "s-1"), runtime.store)
    assert lock is not None and lock.acquire()  # already held: adopting it succeeds at once
    assert runlock.is_alive(home, "s-1")

    lock.release()

    assert not runlock.is_alive(home, "s-1")
    assert load_resumable(home, "s-1").id == "s-1"


def test_checking_a_resume_for_another_process_takes_no_lock(home: Path) -> None:
    assert load_resumable(home, "s-1", run=False).id == "s-1"
    assert not runlock.is_alive(home, "s-1")
    assert load_resumable(home, "s-1").id == "s-1"  # the worker's own load then claims it


def test_last_is_the_newest_session_a_user_started_never_a_nested_child(home: Path) -> None:
    conn = db.connect(home)
    assert conn is not None
    _session(conn, "parent", 10.0)
    _session(conn, "child", 11.0, depth=1)
    _session(conn, "grandchild", 12.0, depth=2)

    assert query.resolve_id(conn, "last") == "parent"
    assert query.resolve_id(conn, "child") == "child"  # named by id, a child still resumes
