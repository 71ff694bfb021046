"""TokenStore: 0600 files in a 0700 dir, atomic writes, a cross-process lock, token-free status."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import time
from pathlib import Path

import pytest

from launcher.auth.tokens import StoredAuth, TokenStore, env_token, token_env_name

ACCESS = "access-token-value-123"
REFRESH = "refresh-token-value-456"


def record(expires_at: float | None = None) -> StoredAuth:
    tokens: dict[str, object] = {
        "access_token": ACCESS,
        "refresh_token": REFRESH,
        "token_type": "Bearer",
        "scope": "read write",
    }
    if expires_at is not None:
        tokens["expires_at"] = expires_at
    return StoredAuth(tokens=tokens, client_info={"client_id": "cid", "client_secret": "csec"})


def test_save_then_load_round_trips(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.save("srv", record(1234.5))
    loaded = store.load("srv")
    assert loaded == record(1234.5)
    assert loaded is not None and loaded.expires_at == 1234.5


def test_modes_dir_0700_file_0600(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = TokenStore(home)
    store.save("srv", record())
    assert stat.S_IMODE(os.stat(home / "auth").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(store.path("srv")).st_mode) == 0o600
    assert [p.name for p in (home / "auth").iterdir()] == ["srv.json"]


def test_one_file_per_server_and_unsafe_names_stay_inside(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.save("a", record())
    store.save("..", record())
    store.save("x y:z", record())
    names = sorted(p.name for p in (tmp_path / "auth").iterdir())
    assert names == ["...json", "a.json", "x%20y%3Az.json"]
    assert all(p.parent == tmp_path / "auth" for p in (tmp_path / "auth").iterdir())


def test_save_is_atomic_a_failed_write_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = TokenStore(tmp_path)
    store.save("srv", record(1.0))

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        store.save("srv", record(2.0))
    monkeypatch.undo()
    assert store.load("srv") == record(1.0)
    # No temp file is left behind.
    assert [p.name for p in (tmp_path / "auth").iterdir()] == ["srv.json"]


def test_delete(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    assert store.delete("srv") is False
    store.save("srv", record())
    assert store.delete("srv") is True
    assert store.load("srv") is None


@pytest.mark.parametrize("text", ["", "{", "[]", '{"version": 99, "tokens": {}}', '{"version": 1}'])
def test_malformed_file_reads_as_absent(tmp_path: Path, text: str) -> None:
    store = TokenStore(tmp_path)
    store.save("srv", record())
    store.path("srv").write_text(text)
    assert store.load("srv") is None
    assert store.status("srv") == {"logged_in": False, "expires_at": None, "scopes": []}


def test_status_shows_state_never_a_token(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    assert store.status("srv") == {"logged_in": False, "expires_at": None, "scopes": []}
    store.save("srv", record(99.0))
    status = store.status("srv")
    assert status == {"logged_in": True, "expires_at": 99.0, "scopes": ["read", "write"]}
    assert ACCESS not in json.dumps(status) and REFRESH not in json.dumps(status)


def test_client_registration_alone_is_not_logged_in(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.save("srv", StoredAuth(tokens={}, client_info={"client_id": "c"}))
    assert store.status("srv")["logged_in"] is False


def test_secrets_and_expiry_helpers() -> None:
    auth = record(expires_at=1000.0)
    assert auth.secrets() == {ACCESS, REFRESH, "csec"}
    assert auth.expired(now=999.0) is False
    assert auth.expired(now=999.0, margin_s=5) is True
    assert record().expired(now=1e12) is False  # no expiry known: valid until rejected
    assert StoredAuth(tokens={}).expired() is True


def test_env_token_name_mapping() -> None:
    assert token_env_name("github") == "SUBAGENT_TOKEN_GITHUB"
    assert token_env_name("my-api.v2") == "SUBAGENT_TOKEN_MY_API_V2"
    assert env_token("my-api.v2", {"SUBAGENT_TOKEN_MY_API_V2": " tok "}) == "tok"
    assert env_token("my-api.v2", {"SUBAGENT_TOKEN_MY_API_V2": ""}) is None
    assert env_token("x", {}) is None


def _hold_lock(home: str, ready: multiprocessing.synchronize.Event, release_after: float) -> None:
    with TokenStore(Path(home)).lock("srv"):
        ready.set()
        time.sleep(release_after)


def test_lock_excludes_another_process(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(tmp_path), ready, 30.0))
    holder.start()
    try:
        assert ready.wait(30), "the holder never took the lock"
        with pytest.raises(TimeoutError, match="held by another process"):
            with TokenStore(tmp_path).lock("srv", timeout_s=0.3):
                pass
        # Another server's lock is independent.
        with TokenStore(tmp_path).lock("other", timeout_s=0.3):
            pass
    finally:
        holder.kill()
        holder.join(30)
    # The holder died: the kernel released its lock.
    with TokenStore(tmp_path).lock("srv", timeout_s=5):
        pass


def _count_refreshes(home: str, counter: str, start: multiprocessing.synchronize.Event) -> None:
    """A refresh that happens only if the stored token is still the old one (the real pattern)."""
    store = TokenStore(Path(home))
    start.wait(30)
    with store.lock("srv"):
        auth = store.load("srv")
        assert auth is not None
        if auth.tokens["access_token"] == "old":
            time.sleep(0.2)  # the refresh's round trip: the others wait meanwhile
            auth.tokens["access_token"] = f"new-{os.getpid()}"
            store.save("srv", auth)
            with open(counter, "a") as out:
                out.write("refresh\n")


def test_concurrent_refreshers_under_the_lock_refresh_once(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.save("srv", StoredAuth(tokens={"access_token": "old"}))
    counter = tmp_path / "count"
    counter.touch()
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    procs = [
        ctx.Process(target=_count_refreshes, args=(str(tmp_path), str(counter), start))
        for _ in range(3)
    ]
    for proc in procs:
        proc.start()
    start.set()
    for proc in procs:
        proc.join(60)
    assert [proc.exitcode for proc in procs] == [0, 0, 0]
    assert counter.read_text().splitlines() == ["refresh"]
