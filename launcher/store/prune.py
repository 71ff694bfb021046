"""`log prune`: old sessions' rows and their files (`sessions/ID/`: events, spilled results),
removed together; never through a symlink out of SUBAGENT_HOME, never a running session's.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import stat
from dataclasses import dataclass, field
from pathlib import Path

from launcher.store.query import prune_ids
from launcher.store.runlock import is_alive

SESSIONS_DIR = "sessions"
"""Under SUBAGENT_HOME: one directory per session, named for its id."""
SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
"""An id that can only name an entry of `sessions/` (the store's ids are ours, but a row
could have been written by hand: `../..` must not reach outside)."""


@dataclass
class Pruned:
    """What a prune did: the sessions deleted, and files it could not remove (with why)."""

    deleted: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)


def prune_sessions(
    conn: sqlite3.Connection, home: Path, older_than_s: float, now: float | None = None
) -> Pruned:
    """Delete sessions started more than `older_than_s` ago, rows and files; a session whose
    process still runs is kept whole."""
    out = Pruned(prune_ids(conn, older_than_s, now, running=lambda sid: is_alive(home, sid)))
    for sid in out.deleted:
        problem = remove_session_files(home, sid)
        if problem is not None:
            out.left.append(problem)
    return out


def remove_session_files(home: Path, session_id: str) -> str | None:
    """Remove `home/sessions/ID` and what it holds; None, or why something was left.

    Every step goes through directory descriptors opened without following links: a
    symlinked `sessions` is left alone, a symlinked session directory loses only the link,
    and links inside are unlinked, never descended (shutil.rmtree's fd-based walk).
    """
    if not SAFE_ID.fullmatch(session_id):
        return None  # names no directory of ours
    try:
        home_fd = os.open(home, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None  # no home: nothing stored on disk
    try:
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            sessions_fd = os.open(SESSIONS_DIR, flags, dir_fd=home_fd)
        except FileNotFoundError:
            return None
        except OSError as exc:  # a symlink (ELOOP) or not a directory: not ours to walk
            return f"{home / SESSIONS_DIR}: {exc.strerror or exc}"
        try:
            return _remove_entry(sessions_fd, session_id, home / SESSIONS_DIR / session_id)
        finally:
            os.close(sessions_fd)
    finally:
        os.close(home_fd)


def _remove_entry(parent_fd: int, name: str, shown: Path) -> str | None:
    try:
        mode = os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode
        if stat.S_ISDIR(mode):
            shutil.rmtree(name, dir_fd=parent_fd)
        else:
            os.unlink(name, dir_fd=parent_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{shown}: {exc.strerror or exc}"
    return None
