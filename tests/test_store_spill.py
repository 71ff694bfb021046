"""Oversized results: the model gets at most the limit (head, size, path); the file holds all."""

from __future__ import annotations

import stat
from pathlib import Path

from launcher.store.spill import fit_result, write_result


def test_a_result_within_the_limit_is_unchanged_and_nothing_is_written(tmp_path: Path) -> None:
    text = "é" * 10  # 20 bytes of UTF-8

    assert fit_result(text, 20, tmp_path / "results", "c1") == text
    assert not (tmp_path / "results").exists()


def test_an_oversized_result_is_kept_whole_and_the_answer_fits_the_limit(tmp_path: Path) -> None:
    text = "".join(f"{i:06d} é\n" for i in range(50_000))
    size = len(text.encode())

    shown = fit_result(text, 4096, tmp_path / "results", "call_1")

    saved = tmp_path / "results" / "call_1.txt"
    assert saved.read_text(encoding="utf-8") == text
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert len(shown.encode()) <= 4096
    assert shown.startswith("000000 é\n000001 é\n")
    assert str(saved) in shown
    assert f"{size} bytes" in shown


def test_the_head_never_splits_a_character(tmp_path: Path) -> None:
    shown = fit_result("é" * 5000, 1001, tmp_path, "c")

    head = shown.split("\n[result cut")[0]
    assert set(head) == {"é"}
    assert len(shown.encode()) <= 1001


def test_an_unsafe_or_reused_call_id_gets_a_new_safe_file(tmp_path: Path) -> None:
    first = write_result(tmp_path, "../../etc/passwd", b"one")
    second = write_result(tmp_path, "../../etc/passwd", b"two")

    assert first.parent == second.parent == tmp_path
    assert (first.name, second.name) == ("______etc_passwd.txt", "______etc_passwd-2.txt")
    assert (first.read_bytes(), second.read_bytes()) == (b"one", b"two")


def test_a_file_that_cannot_be_written_still_cuts_and_says_so(tmp_path: Path) -> None:
    blocker = tmp_path / "results"
    blocker.write_text("a file where the directory should be")

    shown = fit_result("x" * 10_000, 1000, blocker, "c")

    assert len(shown.encode()) <= 1000
    assert "could not be saved" in shown
