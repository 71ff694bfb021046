"""A server's startup_timeout covers its OAuth bootstrap: an authorization server whose
discovery never answers fails that server with the startup_timeout reason, and the session
goes on without it (no run waits on a silent OAuth endpoint)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Subagent, write_config

pytestmark = pytest.mark.e2e

HOLD_S = 120.0
"""A discovery request is held this long (or until the test ends): past any startup_timeout."""


@pytest.fixture
def silent_oauth() -> Iterator[str]:
    """A loopback MCP endpoint that asks for OAuth (401) and whose OAuth metadata never
    answers; yields its MCP URL."""
    closing = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            if self.path.startswith("/.well-known/"):
                closing.wait(HOLD_S)  # discovery: silence
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            host, port = self.server.server_address[:2]
            meta = f"http://{host}:{port}/.well-known/oauth-protected-resource"
            self.send_response(401)
            self.send_header("WWW-Authenticate", f'Bearer resource_metadata="{meta}"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}/mcp"
    finally:
        closing.set()
        server.shutdown()
        server.server_close()


def test_startup_timeout_covers_a_silent_oauth_discovery(
    tmp_path: Path, subagent: Subagent, silent_oauth: str
) -> None:
    entry = {
        "type": "http",
        "url": silent_oauth,
        "auth": "oauth",
        "grant_type": "client_credentials",
        "client_id": "machine",
        "client_secret": "machine-secret-value",
        "startup_timeout": 2,
    }
    config = write_config(tmp_path / "cfg", {"guarded": entry})

    run = subagent.run("tools", "--json", "--config-dir", str(config))

    assert run.code == 0, run.stderr
    state = run.json()["servers"]["guarded"]
    assert state["state"] == "failed"
    assert state["error"].startswith("no tool list within startup_timeout (2 s)"), state
