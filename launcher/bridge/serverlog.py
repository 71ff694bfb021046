"""A server's log file: its stderr, the launcher's notes about it, and the tail of both.

Diagnostics go here, never to the terminal. The server's stderr comes through a pipe and
is masked on its way in (a secret split across reads is still caught), so the file never
holds a `${VAR}` value; a failure message quotes the last stderr lines. The file is 0600.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream

from launcher.secrets import SecretMask, StreamMask
from launcher.state import append_private

STDERR_TAIL_BYTES = 2_000
"""How much of a failed server's stderr is kept for its failure message."""
STDERR_TAIL_LINES = 5
"""How many of the server's last stderr lines a failure message quotes."""
NOTE_MAX_CHARS = 300
"""A diagnostic note in the server log is one line; longer ones are cut."""
NOTE_PREFIX = "[subagent] "


class ServerLog:
    """One server's log file; `mask` hides every known secret in everything written."""

    def __init__(self, path: Path, mask: SecretMask) -> None:
        self.path = path
        self._mask = mask
        self._stream = StreamMask(mask, b"")
        self._tail = b""
        self.drained = anyio.Event()
        """Set when the server's stderr reached EOF and all of it is in the file."""

    def create(self) -> None:
        """Make the (empty, 0600) file now: its path is reported before anything is logged."""
        with contextlib.suppress(OSError):
            append_private(self.path, b"")

    def _append(self, data: bytes) -> None:
        if data:
            with contextlib.suppress(OSError):
                append_private(self.path, data)

    async def pump(self, stderr: ByteReceiveStream) -> None:
        """Copy the server's stderr into the file, masked, until EOF."""
        try:
            async for chunk in stderr:
                self._stderr(self._stream.feed(chunk))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            self._stderr(self._stream.flush())
            self.drained.set()

    def _stderr(self, data: bytes) -> None:
        self._append(data)
        self._tail = (self._tail + data)[-STDERR_TAIL_BYTES:]

    async def settle(self, limit_s: float) -> None:
        """Wait (at most `limit_s`) for stderr to reach EOF, so a failure quotes all of it."""
        with anyio.move_on_after(limit_s):
            await self.drained.wait()

    def note(self, text: str) -> None:
        """Append one diagnostic line (collapsed, cut, masked); a failing disk is ignored."""
        line = self._mask.text(" ".join(text.split()))
        if len(line) > NOTE_MAX_CHARS:
            line = line[: NOTE_MAX_CHARS - 1] + "…"
        self._append(f"{NOTE_PREFIX}{line}\n".encode())

    def failure_detail(self) -> str:
        """` — stderr: a | b` from the last stderr lines, or '' when there are none."""
        tail = self._tail.decode("utf-8", "replace").strip()
        if not tail:
            return ""
        last = [line.strip() for line in tail.splitlines()[-STDERR_TAIL_LINES:]]
        return " — stderr: " + " | ".join(line for line in last if line)
