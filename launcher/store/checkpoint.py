"""Checkpointing `logs.db` at a session's end, on a thread of its own: off every turn's path.

Left to itself SQLite checkpoints inside whichever commit takes the WAL past 1000 pages,
syncing the WAL and then the database, and the next commit, the first of the WAL's new
cycle, syncs the WAL's header: a turn boundary waits for the disk every few sessions. A
process that has committed CHECKPOINT_COMMITS transactions since its last checkpoint
runs one when a session ends instead (nothing of that session writes any more: a
checkpoint beside a writer cannot let the WAL start over), on a daemon thread with its
own connection, and that thread then writes the session's search-index batch, so the
WAL's new cycle, and its header's sync, begin there too. Everything is synced exactly as
before. SQLite's own checkpoint stays as the backstop that bounds the WAL when no session
end comes in time (one long session; a process that exits before its thread is done,
whose unindexed messages the next batch, or `log -q`, indexes). Stdlib only.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from launcher import runtime
from launcher.store.db import connect, index_new, write

CHECKPOINT_COMMITS = 100
"""Commits (about 3 WAL pages each) between two checkpoints: a third of SQLite's 1000 pages,
so one that overlapped the next session's first write (the WAL cannot start over then)
is made good at a later session's end before the backstop fires."""


def due(home: Path, commits: int, held: runtime.Store) -> bool:
    """Count a session's `commits` to `home`'s store; True when its end should checkpoint.

    True reserves the checkpoint: the caller must then call `start(home)`.
    """
    with held.lock:
        total = held.commits.get(home, 0) + commits
        if total < CHECKPOINT_COMMITS or home in held.checkpointing:
            held.commits[home] = total
            return False
        held.commits[home] = 0
        held.checkpointing.add(home)
        return True


def start(home: Path, held: runtime.Store) -> threading.Thread:
    """Checkpoint `home`'s store on a daemon thread, then bring the search index up there."""
    thread = threading.Thread(
        target=_checkpoint,
        args=(home, held),
        name="logs.db checkpoint",
        daemon=True,
    )
    thread.start()
    return thread


def _checkpoint(home: Path, held: runtime.Store) -> None:
    """PASSIVE: waits for no reader or writer; what it cannot copy now, the next one does.

    The search index's batch comes after it: its write is the first of the WAL's new cycle.
    """
    try:
        conn = connect(home, create=False)
        if conn is None:
            return
        try:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            write(conn, lambda: index_new(conn))
        finally:
            conn.close()
    except (sqlite3.Error, OSError):
        pass  # the store went away or is damaged: the backstop, or `log`, says so later
    finally:
        with held.lock:
            held.checkpointing.discard(home)
