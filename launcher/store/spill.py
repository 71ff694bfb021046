"""Oversized tool results: kept whole in a file, the model shown the head, the size and the path.

A server's result over its `max_result_bytes` is written (already masked of secrets) to
`SUBAGENT_HOME/sessions/ID/results/CALL.txt`; the `read` tool may read that directory, so
nothing is silently lost and the context still holds at most `max_result_bytes`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from launcher.state import PRIVATE_FILE_MODE, private_dir

RESULTS_DIR = "results"
"""Under a session's directory: where its oversized results are kept."""
MAX_NAME_CHARS = 100
"""Call ids are the provider's; a longer one is cut so the file name stays portable."""
MAX_SAME_NAME = 1000
"""Files tried per call id (a resumed session may reuse a scripted model's ids)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def results_dir(session_dir: Path) -> Path:
    """Where a session's oversized results go; the `read` tool's read-only second root."""
    return session_dir / RESULTS_DIR


def fit_result(text: str, limit: int, directory: Path, call_id: str) -> str:
    """`text` if it fits in `limit` bytes of UTF-8; else its head and where the whole is.

    The answer is at most `limit` bytes whenever `limit` leaves room for the note (a few
    hundred bytes). If the file cannot be written the head is still cut, and the note says so.
    """
    if len(text) * 4 <= limit:
        return text  # no character takes more than 4 bytes: no need to encode to know
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    try:
        path = write_result(directory, call_id, data)
    except OSError as exc:
        note = (
            f"\n[result cut: {len(data)} bytes, over this server's max_result_bytes ({limit});"
            f" the rest could not be saved: {exc.strerror or exc}]"
        )
    else:
        note = (
            f"\n[result cut: {len(data)} bytes, over this server's max_result_bytes ({limit})."
            f" The whole result is in {path}; read it with the read tool (offset, limit).]"
        )
    room = max(0, limit - len(note.encode("utf-8")))
    return data[:room].decode("utf-8", "ignore") + note


def write_result(directory: Path, call_id: str, data: bytes) -> Path:
    """Write `data` to a new 0600 file `directory/CALL.txt` (never overwriting); its path."""
    private_dir(directory)
    stem = _UNSAFE.sub("_", call_id)[:MAX_NAME_CHARS] or "call"
    for n in range(1, MAX_SAME_NAME + 1):
        path = directory / (f"{stem}.txt" if n == 1 else f"{stem}-{n}.txt")
        try:
            fd = os.open(
                path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_FILE_MODE
            )
        except FileExistsError:
            continue
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        return path
    raise FileExistsError(f"{directory}: {MAX_SAME_NAME} results already saved for {call_id!r}")
