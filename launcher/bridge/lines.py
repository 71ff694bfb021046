"""Splitting a byte stream into JSON-RPC lines in linear time (stdlib only).

Used where lines arrive in chunks: a server's stdout (stdio.py) and serve's early face,
which reads the host's lines before the SDK loads and so must import nothing heavy.
"""

from __future__ import annotations

MAX_LINE_BYTES = 64 * 1024 * 1024
"""One JSON-RPC message per line; a longer line fails the server.

Not the spec's max_result_bytes (64 KiB by default): that caps what the model is shown
after a large result has arrived whole (the rest is kept in a file), and tools/list replies
of big servers exceed it too. 64 MiB is far above any honest message yet bounds what one
server can make the launcher buffer (the line, its decoded text and the parsed message, a
few times this).
"""


def line_too_long(limit: int) -> str:
    """The reason a server fails with when it sends more than `limit` bytes in one line."""
    return f"server sent a line over {limit} bytes without a newline"


class LineReader:
    """Splits a byte stream into lines in linear time, refusing lines over a limit.

    Each chunk is searched for newlines once; a line's pieces are kept and joined once
    when its newline arrives (bytes += chunk; split re-copied the whole buffer per chunk).
    `limit=None` takes lines of any length, as the MCP SDK's stdio server does.
    """

    def __init__(self, limit: int | None = MAX_LINE_BYTES) -> None:
        self.limit = limit
        self._pieces: list[bytes] = []
        self._pending = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        """The complete lines `chunk` ends; ValueError when a line exceeds the limit."""
        lines: list[bytes] = []
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            self._check(self._pending + end - start)
            if self._pieces:
                self._pieces.append(chunk[start:end])
                lines.append(b"".join(self._pieces))
                self._pieces.clear()
                self._pending = 0
            else:
                lines.append(chunk[start:end])
            start = end + 1
        if start < len(chunk):
            self._pieces.append(chunk[start:] if start else chunk)
            self._pending += len(chunk) - start
            self._check(self._pending)
        return lines

    def rest(self) -> bytes:
        """What came after the last newline (at end of input: the unterminated last line)."""
        rest = b"".join(self._pieces)
        self._pieces.clear()
        self._pending = 0
        return rest

    def _check(self, size: int) -> None:
        if self.limit is not None and size > self.limit:
            raise ValueError(line_too_long(self.limit))
