"""An SDK-free stdio MCP server (stdlib only) that starts in milliseconds.

Speaks the handshake era only: `server/discover` gets JSON-RPC "method not found", so
an SDK client in `mode="auto"` falls back to `initialize`. Tools: `echo` (returns its
`text`), `burst` (adds a tool `late_K`, then sends `count` list_changed notifications
before answering) and `--tools N` fillers `tool_0000`... Run: `python bench/fast_stub.py`.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

METHOD_NOT_FOUND = -32601
FALLBACK_VERSION = "2025-06-18"
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
TEXT_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}}
BURST_SCHEMA = {"type": "object", "properties": {"count": {"type": "integer"}}}


def make_tool(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    """One tools/list entry."""
    return {"name": name, "description": description, "inputSchema": schema}


class FastStub:
    """The JSON-RPC state machine: one request in, zero or more messages out."""

    def __init__(self, fillers: int, burst_on_init: int) -> None:
        self.tools = [
            make_tool("echo", "Return the given text unchanged.", TEXT_SCHEMA),
            make_tool("burst", "Add a tool, then send `count` list_changed.", BURST_SCHEMA),
        ]
        self.tools += [
            make_tool(f"tool_{i:04d}", f"Filler tool number {i}.", TEXT_SCHEMA)
            for i in range(fillers)
        ]
        self.burst_on_init = burst_on_init
        self.late = 0
        self._listing: bytes | None = None  # tools/list result, cached until the tools change

    def handle(self, message: dict[str, Any]) -> list[bytes]:
        method = message.get("method")
        msg_id = message.get("id")
        if method is None:
            return []  # a response to something we never sent
        if msg_id is None:
            if method == "notifications/initialized" and self.burst_on_init:
                return [self._list_changed()] * self.burst_on_init
            return []
        if method == "initialize":
            asked = message.get("params", {}).get("protocolVersion")
            version = asked if asked in HANDSHAKE_VERSIONS else FALLBACK_VERSION
            return [
                self._result(
                    msg_id,
                    {
                        "protocolVersion": version,
                        "capabilities": {"tools": {"listChanged": True}},
                        "serverInfo": {"name": "fast-stub", "version": "1.0"},
                    },
                )
            ]
        if method == "tools/list":
            if self._listing is None:
                self._listing = json.dumps({"tools": self.tools}).encode()
            return [b'{"jsonrpc":"2.0","id":%s,"result":%s}\n' % (_id(msg_id), self._listing)]
        if method == "tools/call":
            return self._call(msg_id, message.get("params", {}))
        if method == "ping":
            return [self._result(msg_id, {})]
        return [self._error(msg_id, METHOD_NOT_FOUND, f"Method not found: {method}")]

    def _call(self, msg_id: Any, params: dict[str, Any]) -> list[bytes]:
        name = params.get("name")
        args = params.get("arguments") or {}
        if name == "echo":
            return [self._result(msg_id, _text(str(args.get("text", ""))))]
        if name == "burst":
            self.late += 1
            self.tools.append(make_tool(f"late_{self.late}", "Added by burst.", TEXT_SCHEMA))
            self._listing = None
            count = int(args.get("count", 1))
            out = [self._list_changed()] * count
            return [*out, self._result(msg_id, _text(f"late_{self.late} added, {count} sent"))]
        if any(t["name"] == name for t in self.tools):
            return [self._result(msg_id, _text(json.dumps(args)))]
        return [self._result(msg_id, {**_text(f"Unknown tool: {name}"), "isError": True})]

    @staticmethod
    def _result(msg_id: Any, result: dict[str, Any]) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}).encode() + b"\n"

    @staticmethod
    def _error(msg_id: Any, code: int, text: str) -> bytes:
        error = {"code": code, "message": text}
        return json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": error}).encode() + b"\n"

    @staticmethod
    def _list_changed() -> bytes:
        return b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'


def _id(msg_id: Any) -> bytes:
    return json.dumps(msg_id).encode()


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


class Options:
    """Command-line flags; parsed by hand (argparse, dataclasses cost ~15 ms of start-up)."""

    def __init__(self) -> None:
        self.delay = 0.0
        self.tools = 0
        self.burst = 0
        self.grandchild = False
        self.pidfile: str | None = None


USAGE = """usage: fast_stub.py [--delay S] [--tools N] [--burst N] [--grandchild] [--pidfile PATH]
  --delay S      sleep S seconds before serving
  --tools N      add N filler tools tool_0000...
  --burst N      send N list_changed right after notifications/initialized
  --grandchild   spawn `sleep 300` in our process group (for orphan checks)
  --pidfile PATH write 'SERVER_PID [GRANDCHILD_PID]' here"""


def parse_args(argv: list[str]) -> Options:
    """Parse the flags in USAGE; exit 2 on anything else."""
    opts = Options()
    it = iter(argv)
    try:
        for flag in it:
            if flag == "--delay":
                opts.delay = float(next(it))
            elif flag == "--tools":
                opts.tools = int(next(it))
            elif flag == "--burst":
                opts.burst = int(next(it))
            elif flag == "--grandchild":
                opts.grandchild = True
            elif flag == "--pidfile":
                opts.pidfile = next(it)
            elif flag in ("-h", "--help"):
                print(USAGE)
                sys.exit(0)
            else:
                raise ValueError(flag)
    except (StopIteration, ValueError) as exc:
        sys.stderr.write(f"fast_stub: bad arguments ({exc})\n{USAGE}\n")
        sys.exit(2)
    return opts


def main(argv: list[str] | None = None) -> None:
    """Serve newline-delimited JSON-RPC on stdin/stdout until stdin closes."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    pids = [os.getpid()]
    if args.grandchild:
        # Same process group as us: a client that kills only the leader orphans it.
        null = os.open(os.devnull, os.O_RDWR)
        actions = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1)]
        pids.append(os.posix_spawnp("sleep", ["sleep", "300"], os.environ, file_actions=actions))
    if args.pidfile:
        with open(args.pidfile, "w") as f:
            f.write(" ".join(map(str, pids)) + "\n")
    if args.delay > 0:
        time.sleep(args.delay)
    stub = FastStub(args.tools, args.burst)
    out = sys.stdout.buffer
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        for chunk in stub.handle(message):
            out.write(chunk)
        out.flush()


if __name__ == "__main__":
    main()
