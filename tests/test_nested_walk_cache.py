"""The incremental walk for git repositories (launcher/trust/gitwalk.py `Walker`): a listing
reused for a directory whose identity and ctime held never hides what the model made."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from launcher.trust import gitwalk
from launcher.trust.gitwalk import Walker, scan
from launcher.trust.nested import NestedGuard

AGE_WAIT_S = 60.0


def _gitdir(where: Path, pager: str = "x") -> None:
    """A git dir as git's discovery takes it, made by hand (fast: all in one tick)."""
    for part in ("objects", "refs"):
        (where / part).mkdir(parents=True)
    (where / "HEAD").write_text("ref: refs/heads/main\n")
    (where / "config").write_text(f"[core]\n\tbare = false\n\tpager = {pager}\n")


def _tree(ws: Path) -> None:
    for d in range(10):
        (ws / f"d{d}").mkdir(parents=True)
        for f in range(20):
            (ws / f"d{d}/f{f}.txt").write_text("x\n")
    (ws / "a/b/c").mkdir(parents=True)
    (ws / "spare/moved/deep").mkdir(parents=True)
    _gitdir(ws / "spare/moved/deep/.git")
    (ws / "p").mkdir()
    (ws / "p/.git").write_text("gitdir: ../d0\n")  # the user's: into the workspace
    _gitdir(ws / "users/.git", pager="cat")


def _aged(root: Path) -> None:
    """Wait (bounded) until every directory's ctime is older than the racy window: only
    then is a listing reused."""
    newest = max(os.lstat(p).st_ctime_ns for p, _, _ in os.walk(root))
    deadline = time.monotonic() + AGE_WAIT_S
    while time.time_ns() - gitwalk.RACY_WINDOW_NS <= newest + 1_000_000:
        assert time.monotonic() < deadline, "the clock did not move past the window"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def aged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """One workspace per test, all made at once and aged together (one wait)."""
    base = tmp_path_factory.mktemp("aged")
    names = ("cached", "tick", "replaced", "utime", "deep", "sibling", "inplace")
    spaces = {name: base / name for name in names}
    for ws in spaces.values():
        _tree(ws)
    _aged(base)
    yield spaces


def test_an_unchanged_directory_is_not_listed_again(aged: dict[str, Path]) -> None:
    walker = Walker(aged["cached"])
    first = walker.scan()
    assert "d3" in walker.listed
    assert walker.scan() == first == scan(aged["cached"])
    assert walker.listed == []
    assert set(first.gitdirs) == {"spare/moved/deep/.git", "users/.git"}


def test_a_repository_made_right_after_a_walk_is_found(aged: dict[str, Path]) -> None:
    """No sleep between the walk and the plant: the same clock tick."""
    ws = aged["tick"]
    guard = NestedGuard.start(ws)
    _gitdir(ws / "d3/.git")
    _gitdir(ws / "d4/new/.git")
    assert guard.check() == ["d3/.git (config: core.pager)", "d4/new/.git (config: core.pager)"]


def test_a_directory_changed_within_the_window_is_listed_again(tmp_path: Path) -> None:
    """Its ctime may still be the tick an entry made after the listing would get."""
    (tmp_path / "fresh").mkdir()
    walker = Walker(tmp_path)
    walker.scan()
    walker.scan()
    assert {".", "fresh"} <= set(walker.listed)


def test_a_replaced_directory_is_listed_again(aged: dict[str, Path]) -> None:
    ws = aged["replaced"]
    guard = NestedGuard.start(ws)
    shutil.rmtree(ws / "d5")
    (ws / "spare/moved").rename(ws / "d5")  # an older directory, another inode, same name
    assert guard.check() == ["d5/deep/.git (config: core.pager)"]
    assert guard.walker is not None and "d5" in guard.walker.listed


def test_utime_putting_a_directorys_mtime_back_hides_nothing(aged: dict[str, Path]) -> None:
    ws = aged["utime"]
    guard = NestedGuard.start(ws)
    before = os.lstat(ws / "d6")
    _gitdir(ws / "d6/.git")
    os.utime(ws / "d6", ns=(before.st_atime_ns, before.st_mtime_ns))
    parent = os.lstat(ws)
    (ws / "d7/sub").mkdir()
    _gitdir(ws / "d7/sub/.git")
    os.utime(ws / "d7", ns=(before.st_atime_ns, before.st_mtime_ns))
    os.utime(ws, ns=(parent.st_atime_ns, parent.st_mtime_ns))
    assert os.lstat(ws / "d6").st_mtime_ns == before.st_mtime_ns
    assert guard.check() == ["d6/.git (config: core.pager)", "d7/sub/.git (config: core.pager)"]


def test_a_deep_new_subtree_under_an_unchanged_parent_is_found(aged: dict[str, Path]) -> None:
    ws = aged["deep"]
    guard = NestedGuard.start(ws)
    (ws / "a/b/c/x/y/z").mkdir(parents=True)
    _gitdir(ws / "a/b/c/x/y/z/.git")
    (ws / "spare/moved").rename(ws / "a/b/c/old")  # an aged subtree, moved in whole
    assert guard.check() == [
        "a/b/c/old/deep/.git (config: core.pager)",
        "a/b/c/x/y/z/.git (config: core.pager)",
    ]
    assert guard.walker is not None
    assert guard.walker.scan() == scan(ws)


def test_a_cache_never_hides_a_change_from_a_sibling(aged: dict[str, Path]) -> None:
    """Two sessions share the note, each its own cache: whichever walks first defuses,
    and a change after that (in place: no directory's ctime moves) is seen by the other."""
    ws = aged["sibling"]
    first = NestedGuard.start(ws)
    second = NestedGuard.of(ws, first.before)
    assert second.check() == [] and first.check() == []  # both caches filled
    _gitdir(ws / "d8/.git")
    assert second.check() == ["d8/.git (config: core.pager)"]
    assert first.check() == []  # defused already, noted as defused
    with open(ws / "d8/.git/config", "a") as file:
        file.write("\tfsmonitor = touch pwned\n")
    assert first.check() == ["d8/.git (config: core.fsmonitor)"]


def test_changes_in_place_are_seen_through_a_reused_listing(aged: dict[str, Path]) -> None:
    """A config appended to, a `.git` file rewritten: no directory's ctime moves."""
    ws = aged["inplace"]
    guard = NestedGuard.start(ws)
    assert guard.check() == []
    with open(ws / "users/.git/config", "a") as file:
        file.write("\teditor = vi\n")
    (ws / "p/.git").write_text("gitdir: /\n")
    assert guard.check() == [
        "users/.git (config: core.editor, core.pager)",
        "p/.git (removed: not a pointer into the workspace)",
    ]
    assert guard.walker is not None and guard.walker.listed == []  # all reused


def test_only_local_filesystems_are_cached(
    aged: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A network or FUSE filesystem's ctime comes from another clock: listed every walk."""
    assert os.stat(aged["cached"]).st_dev in gitwalk._local_devices()
    monkeypatch.setattr(gitwalk, "LOCAL_FILESYSTEMS", frozenset())
    walker = Walker(aged["cached"])
    walker.scan()
    walker.scan()
    assert "d3" in walker.listed
