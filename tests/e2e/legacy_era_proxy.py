"""Make a dual-era stdio MCP server look handshake-only: `python legacy_era_proxy.py CMD ARGS...`.

The stub servers serve whichever era the client opens, and the launcher's `auto` mode
picks 2026-07-28. This proxy answers `server/discover` with "method not found", so the
client falls back to `initialize` (the handshake era); every other line passes through.
Stdlib only: it starts in milliseconds. The server runs as its child, in its group.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading

METHOD_NOT_FOUND = -32601


def main(argv: list[str]) -> int:
    """Run the server `argv` behind the proxy until our stdin closes; return its status."""
    server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    out_lock = threading.Lock()

    def emit(line: bytes) -> None:
        with out_lock:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()

    def pump_out() -> None:
        assert server.stdout is not None
        for line in server.stdout:
            emit(line)

    threading.Thread(target=pump_out, daemon=True).start()
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict) and message.get("method") == "server/discover":
            error = {"code": METHOD_NOT_FOUND, "message": "Method not found"}
            reply = {"jsonrpc": "2.0", "id": message.get("id"), "error": error}
            emit(json.dumps(reply).encode() + b"\n")
            continue
        server.stdin.write(line)
        server.stdin.flush()
    server.stdin.close()
    return server.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
