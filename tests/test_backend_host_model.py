"""A host's `scripted:` file: the opened file is what is checked, read once, bounded."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from launcher.backend import host_model
from launcher.backend.host_model import MAX_HOST_SCRIPT_BYTES, read_host_script
from launcher.errors import UsageError

SCRIPT = "steps:\n  - say: fine\n"


def test_the_text_read_is_returned_for_the_worker(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text(SCRIPT)
    assert read_host_script("scripted:ok.yaml", roots=[tmp_path], workspace=tmp_path) == SCRIPT
    assert read_host_script("openai:gpt-4.1-mini", roots=[], workspace=tmp_path) is None
    assert read_host_script(None, roots=[], workspace=tmp_path) is None


def test_a_directory_swapped_for_a_symlink_after_the_path_check_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    (workspace / "sub").mkdir(parents=True)
    (workspace / "sub" / "s.yaml").write_text(SCRIPT)
    outside.mkdir()
    (outside / "s.yaml").write_text("steps:\n  - hunter2_field: the-password\n")
    checked = host_model.scripted_path

    def then_swapped(spec: str, where: Path) -> Path:
        path = checked(spec, where)  # resolved inside: the check passes on this path
        (workspace / "sub" / "s.yaml").unlink()
        (workspace / "sub").rmdir()
        (workspace / "sub").symlink_to(outside, target_is_directory=True)
        return path

    monkeypatch.setattr(host_model, "scripted_path", then_swapped)
    with pytest.raises(UsageError) as caught:
        read_host_script("scripted:sub/s.yaml", roots=[workspace], workspace=workspace)
    assert "must be a file inside" in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_a_last_component_swapped_for_a_symlink_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "s.yaml").write_text(SCRIPT)
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2: the-password\n")
    checked = host_model.scripted_path

    def then_swapped(spec: str, where: Path) -> Path:
        path = checked(spec, where)
        path.unlink()
        path.symlink_to(secret)
        return path

    monkeypatch.setattr(host_model, "scripted_path", then_swapped)
    with pytest.raises(UsageError, match="cannot read script") as caught:
        read_host_script("scripted:s.yaml", roots=[tmp_path], workspace=tmp_path)
    assert "hunter2" not in str(caught.value)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            read_host_script("scripted:pipe.yaml", roots=[tmp_path], workspace=tmp_path)
        except UsageError as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=30)
    if reader.is_alive():  # unblock the reader so the test process can end
        with open(tmp_path / "pipe.yaml", "w"):
            pass
    assert [str(e) for e in outcome] == [
        "model 'scripted:pipe.yaml': cannot read script: not a regular file"
    ]


def test_over_the_limit_not_utf8_and_symlink_loops_are_errors_of_our_own_words(
    tmp_path: Path,
) -> None:
    (tmp_path / "big.yaml").write_text("# " + "x" * MAX_HOST_SCRIPT_BYTES + "\n" + SCRIPT)
    (tmp_path / "latin.yaml").write_bytes(b"steps:\n  - say: hunter2 \xe9\n")
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    expected = {
        "big.yaml": f"larger than {MAX_HOST_SCRIPT_BYTES // 1024} KiB",
        "latin.yaml": "cannot read script: not UTF-8 text",
        "loop.yaml": "cannot read script:",
    }
    for name, words in expected.items():
        with pytest.raises(UsageError) as caught:
            read_host_script(f"scripted:{name}", roots=[tmp_path], workspace=tmp_path)
        assert words in str(caught.value)
        assert "hunter2" not in str(caught.value)
