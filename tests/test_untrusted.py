"""Reading files a model could have written: no link, FIFO or device followed, sizes capped."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from launcher.untrusted import OverBudget, RefusedFile, copy_matching, open_dir, read_capped


def test_a_regular_file_is_read_and_a_missing_one_is_file_not_found(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_bytes(b"abc")
    assert read_capped(tmp_path, "d/f", 3) == b"abc"
    with pytest.raises(FileNotFoundError):
        read_capped(tmp_path, "d/missing", 3)
    with pytest.raises(FileNotFoundError):
        read_capped(tmp_path, "gone/f", 3)


@pytest.mark.parametrize("make", ["fifo", "devzero", "link", "linked-dir", "big"])
def test_anything_but_a_small_regular_file_on_a_plain_path_is_refused(
    tmp_path: Path, make: str
) -> None:
    (tmp_path / "d").mkdir()
    target = tmp_path / "d" / "f"
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "f").write_bytes(b"secret")
    if make == "fifo":
        os.mkfifo(target)
    elif make == "devzero":
        target.symlink_to("/dev/zero")
    elif make == "link":
        target.symlink_to(tmp_path / "elsewhere" / "f")
    elif make == "linked-dir":
        (tmp_path / "d").rmdir()
        (tmp_path / "d").symlink_to(tmp_path / "elsewhere")
    else:
        target.write_bytes(b"x" * 100)
    with pytest.raises(RefusedFile):
        read_capped(tmp_path, "d/f", 10)


def test_a_path_that_climbs_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RefusedFile):
        read_capped(tmp_path, "../etc/passwd", 10)
    with pytest.raises(RefusedFile):
        with open_dir(tmp_path, "a/../b"):
            pass


def test_copy_takes_matching_regular_files_only_and_keeps_to_its_budget(tmp_path: Path) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    (src / "aa").write_bytes(b"one")
    (src / "bb").symlink_to(tmp_path / "outside")
    (tmp_path / "outside").write_bytes(b"secret")
    os.mkfifo(src / "cc")
    (src / "readme").write_bytes(b"not a match")
    budget = [100]
    with open_dir(src) as fd:
        copy_matching(fd, re.compile(r"[a-c]{2}"), dst, budget)
    assert sorted(p.name for p in dst.iterdir()) == ["aa"]
    assert budget == [97]
    with open_dir(src) as fd, pytest.raises(OverBudget):
        copy_matching(fd, re.compile(r"aa"), tmp_path / "dst2", [2])
