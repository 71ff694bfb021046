"""The conformance client behind a proxy whose first `server/discover` answer comes late.

`conformance client --command "python tests/e2e/conformance_slow_client.py"` appends the
scenario server's URL. This program puts a loopback HTTP proxy in front of it that holds
the answer to the first `server/discover` until the client has given up on it (its next
request, the SDK's fallback `initialize`, arrives) — a server starting cold, or a loaded
machine — and passes everything else through untouched; then it runs `conformance_client`
against the proxy. The server is the suite's own, unchanged.
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio

from tests.e2e import conformance_client

HOLD_LIMIT_S = 90.0
"""Bounds the hold on the first discover answer: the SDK gives up on it after 10 s, and its
fallback request ends the hold; this only bounds a client that never sends one."""
FORWARD_TIMEOUT_S = 60.0
"""Bounds one forwarded request; the suite's local server answers at once."""
HOP_HEADERS = {"connection", "transfer-encoding", "content-length", "host", "keep-alive"}


def proxy_handler(upstream: str) -> type[BaseHTTPRequestHandler]:
    """A handler forwarding POSTs to `upstream`, the first discover answered only after the
    client sent something else."""
    first_discover = threading.Event()
    gave_up = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                method = json.loads(body).get("method")
            except (ValueError, AttributeError):
                method = None
            if method == "server/discover" and not first_discover.is_set():
                first_discover.set()
                gave_up.wait(HOLD_LIMIT_S)
            elif first_discover.is_set():
                gave_up.set()
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
            request = urllib.request.Request(upstream, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=FORWARD_TIMEOUT_S) as answer:
                    self._relay(answer.status, answer.headers.items(), answer.read())
            except urllib.error.HTTPError as refused:
                self._relay(refused.code, refused.headers.items(), refused.read())

        def do_GET(self) -> None:
            self._relay(405, [], b"")

        do_DELETE = do_GET

        def _relay(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
            self.send_response(status)
            for key, value in headers:
                if key.lower() not in HOP_HEADERS:
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            sys.stderr.write(f"proxy: {format % args}\n")

    return Handler


def main(argv: list[str]) -> int:
    """Entry point: the server URL is the last argument."""
    if len(argv) < 2:
        sys.stderr.write("usage: conformance_slow_client.py URL\n")
        return 2
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), proxy_handler(argv[-1]))
    proxy.daemon_threads = True
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{proxy.server_address[1]}/mcp"
    try:
        with tempfile.TemporaryDirectory(prefix="subagent-conformance-") as state:
            return anyio.run(conformance_client.run, url, Path(state))
    finally:
        proxy.shutdown()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
