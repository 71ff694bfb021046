"""serve's early face: answers `initialize`, `tools/list` and `ping` before the MCP SDK loads.

Why hand-written answers at all: importing the SDK costs ~1.6 s (10-12x `python -c
"import typer"`), and Claude Code and Codex do not wait for a slow MCP server: on a loaded
machine their first model turn had no sub-agent tools. So this module, which imports
nothing heavy (no mcp, no pydantic, no anyio), reads the host's lines on a thread while the
SDK loads, answers those three requests from catalog.py (the same data the SDK server
answers from; tests/test_backend_early_equal.py holds both answers equal for every
handshake version), and queues every other line, in order, for the SDK server. handover.py
then replays the answered `initialize` to the SDK server (under a private id, its answer
dropped) and feeds it the queue and the live lines that follow: nothing is lost or
answered twice. Anything it is not sure to answer exactly as the SDK would (a first
request other than `initialize`, a 2026-07-28 envelope, unusual params, a request that
also carries `result` or `error`) waits for the SDK.
Lines are read as the SDK's stdio server reads them, in linear time and decoded as UTF-8
with U+FFFD for invalid bytes, but bounded: a line over MAX_LINE_BYTES is dropped.
"""

from __future__ import annotations

import json
import os
import queue
import threading
from collections.abc import Callable, Iterable
from typing import Any, BinaryIO

from launcher.backend import catalog
from launcher.bridge.lines import LineReader

MODERN_META_KEY = "io.modelcontextprotocol/protocolVersion"
"""Only 2026-07-28 requests carry it in `_meta`: the SDK serves that era, not this face."""
READ_CHUNK = 65536
"""Bytes asked of the wire per read (a pipe's buffer); lines are any number of these."""
MAX_LINE_BYTES = 128 * 2**20
"""A host line longer than this is dropped (answered with a parse error, id null) as it
arrives, so a line that never ends cannot fill serve's memory. Twice the largest message a
test sends (64 MB); the SDK's own stdio server has no limit."""
TOO_LONG = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32700,
                "message": f"Parse error: a line over {MAX_LINE_BYTES // 2**20} MiB; dropped",
            },
        },
        separators=(",", ":"),
    ).encode()
    + b"\n"
)


def _plain_params(params: Any) -> bool:
    """Params the SDK ignores for tools/list and ping: none, or only a `_meta` object."""
    if params is None:
        return True
    return (
        isinstance(params, dict)
        and set(params) <= {"_meta"}
        and isinstance(params.get("_meta", {}), dict)
    )


def _is_init_params(params: Any) -> bool:
    """`initialize` params the SDK certainly accepts (else it answers, with its error)."""
    if not isinstance(params, dict):
        return False
    info = params.get("clientInfo")
    return (
        isinstance(params.get("protocolVersion"), str)
        and isinstance(params.get("capabilities"), dict)
        and all(isinstance(v, dict) for v in params["capabilities"].values())
        and isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    )


TAKEN: dict[str, Any] = {}
"""`EarlyAnswers.answer`'s word for a request taken by `take` (answered later, elsewhere)."""
Taker = Callable[[dict[str, Any], dict[str, Any] | None], bool]
"""Offered each request the face cannot answer, with the `initialize` it answered: True
when it takes the request (first_call.py), which then never reaches the SDK."""


class EarlyAnswers:
    """The answer table: which line gets which answer before the SDK is up (None: wait)."""

    def __init__(self, agents: Iterable[tuple[str, str]], take: Taker | None = None) -> None:
        self.agents = list(agents)
        self.take = take
        self.initialize: dict[str, Any] | None = None
        """The `initialize` request answered here (replayed to the SDK at the hand-over)."""
        self.version: str | None = None
        self._open = True
        """False once a request (or a line that is no JSON object) went to the SDK: from then
        on the SDK answers everything, in order."""

    def answer(self, line: str | bytes) -> dict[str, Any] | None:
        """The response to `line` if this face may give it, else None (the SDK will)."""
        if not self._open:
            return None
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested past the stack: the SDK's
            message = None
        reply = self._reply(message) if isinstance(message, dict) else None
        notification = isinstance(message, dict) and "id" not in message and "method" in message
        if reply is None and (self.initialize is None or not notification):
            # The era and handshake are the SDK's to decide; and an answer from here must
            # never overtake a request queued for the SDK: answers go out in request order.
            self._open = False
        return reply

    def _reply(self, msg: dict[str, Any]) -> dict[str, Any] | None:
        if msg.get("jsonrpc") != "2.0" or "id" not in msg or "method" not in msg:
            return None  # a notification or a response: the SDK's
        if "result" in msg or "error" in msg:
            return None  # the SDK's parser may read it as a response: its call, not ours
        method, params, rid = msg["method"], msg.get("params"), msg["id"]
        if not isinstance(rid, str | int) or isinstance(rid, bool):
            return None
        if isinstance(params, dict) and MODERN_META_KEY in (params.get("_meta") or {}):
            return None
        if self.initialize is None:
            if method != "initialize" or not _is_init_params(params):
                return None
            assert isinstance(params, dict)  # _is_init_params said so
            self.initialize = msg
            self.version = catalog.negotiate(params["protocolVersion"])
            return {"jsonrpc": "2.0", "id": rid, "result": catalog.initialize_result(self.version)}
        if method == "ping" and _plain_params(params):
            return {"jsonrpc": "2.0", "id": rid, "result": {}}
        if method == "tools/list" and _plain_params(params) and self.version is not None:
            listed = catalog.tools(self.agents, task_support=catalog.has_tasks(self.version))
            return {"jsonrpc": "2.0", "id": rid, "result": {"tools": listed}}
        if self.take is not None and self.take(msg, self.initialize):
            return TAKEN
        return None


class EarlyFace:
    """Owns the stdio wire: a reader thread that answers early or queues, and the writer."""

    def __init__(
        self,
        answers: EarlyAnswers,
        wire_in: BinaryIO,
        wire_out: int,
        note: Callable[[str], None] | None = None,
    ) -> None:
        self.answers = answers
        self.note = note
        """Shown every host line, before and after the hand-over (first_call.py's cancels)."""
        self._in = wire_in
        self._out = wire_out
        self.lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        """Lines for the SDK server, in arrival order; None at end of input."""
        self._lock = threading.Lock()
        self._handed_over = False
        self._write_lock = threading.Lock()

    @classmethod
    def on_stdio(cls, answers: EarlyAnswers) -> EarlyFace:
        """Take over fds 0 and 1 as the SDK's stdio server does: the wire moves to private
        descriptors, fd 0 reads /dev/null and fd 1 goes to stderr, so no child process or
        stray print can read or write the protocol stream."""
        import fcntl

        wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
        wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
        return cls(answers, os.fdopen(wire_in, "rb", buffering=0), wire_out)

    def start(self) -> None:
        """Start reading the host's lines (a daemon thread: it never holds the process up)."""
        threading.Thread(target=self._read, name="serve-early-face", daemon=True).start()

    def _read(self) -> None:
        try:
            for line in self._lines():
                if line is None:
                    self.write(TOO_LONG)
                    continue
                if self.note is not None:
                    self.note(line)
                with self._lock:
                    reply = None if self._handed_over else self.answers.answer(line)
                    if reply is TAKEN:
                        continue
                    if reply is not None:
                        # Under the lock: the hand-over waits for this answer to be out.
                        self.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
                        continue
                self.lines.put(line)
        except OSError:
            pass  # the wire is gone: the same as end of input
        finally:
            self.lines.put(None)

    def _lines(self) -> Iterable[str | None]:
        """The host's non-blank lines, decoded as the SDK's stdio server decodes them; None
        for a line over MAX_LINE_BYTES, whose bytes are dropped as they come."""
        reader = LineReader(limit=None)  # the bound is kept here, so a long line is skipped
        pending = 0  # bytes of the unterminated line so far
        dropping = False
        while chunk := self._in.read(READ_CHUNK):
            start = 0
            while start < len(chunk):  # one piece per line end: linear in the chunk
                newline = chunk.find(b"\n", start)
                end = len(chunk) if newline == -1 else newline + 1
                piece = chunk[start:end]
                start = end
                if dropping:
                    dropping = newline == -1
                    continue
                pending += len(piece)
                if pending > MAX_LINE_BYTES + 1:
                    reader.rest()  # dropped
                    pending, dropping = 0, newline == -1
                    yield None
                    continue
                if newline != -1:
                    pending = 0
                for raw in reader.feed(piece):
                    if raw and not raw.isspace():  # strip() would copy a huge line
                        yield raw.decode("utf-8", "replace")
        if (rest := reader.rest()) and not rest.isspace():
            yield rest.decode("utf-8", "replace")

    def hand_over(self) -> dict[str, Any] | None:
        """From now on every line goes to the SDK; returns the `initialize` answered here."""
        with self._lock:
            self._handed_over = True
            return self.answers.initialize

    def write(self, data: bytes) -> None:
        """Write one framed message to the host (whole, whichever thread writes)."""
        with self._write_lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self._out, view) :]
