"""A directory swapped for a symlink to outside while writes run: no write may escape.

The swap is an atomic exchange (renameat2 RENAME_EXCHANGE), so `d` is at every instant
either the real directory or a symlink to the outside one; a path check followed by an
open by name loses this race now and then, an fd walk with O_NOFOLLOW never does.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from launcher.tools.files import write_file
from launcher.tools.workspace import Workspace

WRITES = 900
"""Writes attempted while the swapper runs (the issue saw 3 of 900 escape)."""
RACE_LIMIT_S = 10.0
"""The writes stop after this long, however many were made."""
AT_FDCWD = -100
RENAME_EXCHANGE = 2

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_renameat2 = getattr(_libc, "renameat2", None)

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or _renameat2 is None, reason="needs Linux renameat2"
)


def _exchange(a: Path, b: Path) -> None:
    assert _renameat2 is not None
    if _renameat2(AT_FDCWD, bytes(a), AT_FDCWD, bytes(b), RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


@pytest.fixture
def swapping(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A workspace whose `d` flips between a real directory and a link to `outside`."""
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    (root / "other").symlink_to(outside, target_is_directory=True)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            _exchange(root / "d", root / "other")

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # interleave the two threads finely
    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    try:
        yield root, outside
    finally:
        stop.set()
        thread.join(RACE_LIMIT_S)
        sys.setswitchinterval(old_interval)


def test_directory_swapped_for_symlink_never_lets_a_write_out(
    swapping: tuple[Path, Path],
) -> None:
    root, outside = swapping
    ws = Workspace(root)
    deadline = time.monotonic() + RACE_LIMIT_S
    written = 0
    for i in range(WRITES):
        if time.monotonic() > deadline:
            break
        try:
            result = write_file(ws, {"path": f"d/f{i}.txt", "content": "x"}, 10_000)
        except Exception:  # a refusal or a vanished path: fine, as long as nothing escapes
            continue
        written += "Wrote" in result.content
    assert os.listdir(outside) == []
    assert written > 0  # the race ran against real writes, not only refusals
