"""A server's log file: its stderr, the launcher's notes about it, and the tail of both.

Diagnostics go here, never to the terminal; a failure message quotes the last stderr
lines (without the launcher's own notes) and every text is redacted first.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

STDERR_TAIL_BYTES = 2_000
"""How much of a failed server's stderr log is read for its failure message."""
STDERR_TAIL_LINES = 5
"""How many of the server's last stderr lines a failure message quotes."""
NOTE_MAX_CHARS = 300
"""A diagnostic note in the server log is one line; longer ones are cut."""
NOTE_PREFIX = "[subagent] "


def stderr_tail(path: Path, limit: int = STDERR_TAIL_BYTES) -> str:
    """The last `limit` bytes of a server's stderr log, without the launcher's own notes."""
    try:
        with path.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - limit))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line for line in text.splitlines() if not line.startswith(NOTE_PREFIX)]
    return "\n".join(lines).strip()


class ServerLog:
    """One server's log file; `redact` masks `${VAR}` secrets in everything written."""

    def __init__(self, path: Path, redact: Callable[[str], str]) -> None:
        self.path = path
        self._redact = redact

    def note(self, text: str) -> None:
        """Append one diagnostic line (collapsed, cut, redacted); a failing disk is ignored."""
        line = self._redact(" ".join(text.split()))
        if len(line) > NOTE_MAX_CHARS:
            line = line[: NOTE_MAX_CHARS - 1] + "…"
        try:
            with self.path.open("a", encoding="utf-8") as f:
                f.write(f"{NOTE_PREFIX}{line}\n")
        except OSError:
            pass

    def failure_detail(self) -> str:
        """` — stderr: a | b` from the last stderr lines, or '' when there are none."""
        tail = stderr_tail(self.path)
        if not tail:
            return ""
        last = [line.strip() for line in tail.splitlines()[-STDERR_TAIL_LINES:]]
        return " — stderr: " + " | ".join(line for line in last if line)
