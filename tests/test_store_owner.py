"""Who started a session through serve, and the lookup that lets only that owner name it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from launcher.errors import UsageError
from launcher.store import db
from launcher.store.history import NOT_OWNED, load_resumable
from launcher.store.owner import Owner
from launcher.store.query import OWNED_PREFIX_MIN, resolve_owned

MINE = Owner(serve="serve-mine")
THEIRS = Owner(serve="serve-theirs")


def _store(home: Path, rows: dict[str, Owner | None]) -> sqlite3.Connection:
    conn = db.connect(home)
    assert conn is not None
    for sid, owner in rows.items():
        conn.execute(
            "INSERT INTO sessions(id, agent, started, status, owner_serve, owner_caller)"
            " VALUES (?, 'general-purpose', 0, 'completed', ?, ?)",
            (sid, owner.serve if owner else None, owner.caller if owner else None),
        )
    return conn


def test_a_serves_identity_is_its_resolved_config_dir_and_workspace(tmp_path: Path) -> None:
    (tmp_path / "cfg").mkdir()
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws-link").symlink_to(tmp_path / "ws")
    one = Owner.of_serve(tmp_path / "cfg", tmp_path / "ws")
    assert one == Owner.of_serve(tmp_path / "cfg", tmp_path / "ws-link")
    assert one != Owner.of_serve(tmp_path / "cfg", tmp_path / "cfg")
    assert one != Owner.of_serve(None, tmp_path / "ws")
    assert Owner.from_json(one.to_json()) == one
    assert Owner.from_json(None) is None and Owner.from_json({"serve": 3}) is None


def test_an_owner_names_its_sessions_by_id_or_a_long_prefix_and_nothing_else(
    tmp_path: Path,
) -> None:
    conn = _store(
        tmp_path,
        {
            "20260101T000000-aaaaaa": MINE,
            "20260101T000000-bbbbbb": THEIRS,
            "20260102T000000-cccccc": None,  # a user's own run
            "20260103T000000-dddddd": Owner(serve="serve-mine", caller="someone"),
        },
    )
    assert resolve_owned(conn, "20260101T000000-aaaaaa", MINE) == "20260101T000000-aaaaaa"
    assert resolve_owned(conn, "20260101", MINE) == "20260101T000000-aaaaaa"
    assert resolve_owned(conn, "2026010", MINE) is None  # shorter than OWNED_PREFIX_MIN
    assert OWNED_PREFIX_MIN == 8
    for other in ("20260101T000000-bbbbbb", "20260102T000000-cccccc", "20260103"):
        assert resolve_owned(conn, other, MINE) is None
    assert resolve_owned(conn, "20260103", Owner("serve-mine", "someone")) is not None


def test_an_owners_ambiguous_prefix_says_so_only_among_its_own(tmp_path: Path) -> None:
    conn = _store(tmp_path, {"20260101T000000-aaaaaa": MINE, "20260101T000000-bbbbbb": MINE})
    with pytest.raises(UsageError, match="ambiguous"):
        resolve_owned(conn, "20260101", MINE)
    assert resolve_owned(conn, "20260101", THEIRS) is None


def test_load_resumable_gives_one_text_for_not_found_and_not_yours(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as empty:
        load_resumable(tmp_path, "20260101T000000-bbbbbb", run=False, owner=MINE)
    _store(tmp_path, {"20260101T000000-aaaaaa": MINE, "20260101T000000-bbbbbb": THEIRS})
    texts = {str(empty.value)}
    for ref in ("20260101T000000-bbbbbb", "20990101T000000-ffffff", "2", "last"):
        with pytest.raises(UsageError) as caught:
            load_resumable(tmp_path, ref, run=False, owner=MINE)
        texts.add(str(caught.value))
    assert texts == {NOT_OWNED}
    found = load_resumable(tmp_path, "20260101T000000-aaaaaa", run=False, owner=MINE)
    assert found.id == "20260101T000000-aaaaaa"
    # Without an owner (the CLI's resume) any session may be named, as before.
    assert load_resumable(tmp_path, "20260101T000000-b", run=False).id.endswith("bbbbbb")


def test_sessions_stored_before_the_owner_columns_belong_to_no_serve(tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    old = sqlite3.connect(tmp_path / db.DB_NAME, isolation_level=None)
    for step in db.MIGRATIONS[:4]:  # the schema as version 4 shipped it
        for statement in db._statements(step):
            old.execute(statement)
    old.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    old.execute("INSERT INTO schema_version VALUES (4)")
    old.execute(
        "INSERT INTO sessions(id, agent, started, status) VALUES ('20250101T000000-aaaaaa',"
        " 'a', 0, 'completed')"
    )
    old.close()
    conn = db.connect(tmp_path)
    assert conn is not None
    assert resolve_owned(conn, "20250101T000000-aaaaaa", MINE) is None
    row = conn.execute("SELECT owner_serve, owner_caller FROM sessions").fetchone()
    assert tuple(row) == (None, None)
