"""The loopback redirect receiver of `subagent login`: one GET on 127.0.0.1, then done.

The browser (or a test's HTTP client) follows the authorization server's redirect to
`http://127.0.0.1:PORT/callback?code=...&state=...`; the first request on the callback
path carrying the login's `state` settles the result. Any other request (a forged one, from
any local process or web page) is answered 400 and changes nothing. No SDK here: plain
anyio sockets and the stdlib URL parser.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import anyio
from anyio.abc import SocketStream, TaskGroup

CALLBACK_PATH = "/callback"
"""The redirect URI's path."""
REQUEST_READ_TIMEOUT_S = 10.0
"""A client that connects and sends no request line within this is dropped."""
MAX_REQUEST_BYTES = 64 * 1024
"""The request head is small; a longer one is not a redirect from an authorization server."""

_PAGE = (
    "<!doctype html><html><head><title>subagent</title></head><body>"
    "<p>{message}</p><p>You can close this window.</p></body></html>"
)


@dataclass(frozen=True)
class Redirect:
    """The query of the redirect: a code and state, or an OAuth error."""

    code: str | None
    state: str | None
    iss: str | None
    error: str | None
    error_description: str | None


class RedirectReceiver:
    """Listens on 127.0.0.1 (ephemeral port) until the callback with the login's state arrives."""

    def __init__(self) -> None:
        self.port = 0
        self._result: Redirect | None = None
        self._arrived = anyio.Event()
        self._state: str | None = None

    def expect_state(self, state: str) -> None:
        """The `state` the authorization URL carries; only a callback repeating it counts."""
        self._state = state

    @property
    def redirect_uri(self) -> str:
        """Where the authorization server must send the browser back."""
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def start(self, tg: TaskGroup) -> None:
        """Bind the port and serve in `tg` (cancel `tg` to stop)."""
        listener: anyio.abc.SocketListener = await anyio.create_tcp_listener(  # type: ignore[assignment]
            local_host="127.0.0.1", local_port=0
        )
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        tg.start_soon(self._serve, listener, tg)

    async def wait(self, timeout_s: float) -> Redirect:
        """The redirect's query; TimeoutError when none came within `timeout_s`."""
        with anyio.fail_after(timeout_s):
            await self._arrived.wait()
        assert self._result is not None
        return self._result

    async def _serve(self, listener: anyio.abc.Listener[SocketStream], tg: TaskGroup) -> None:
        """Serve until cancelled; the port is released by this task, after its last accept."""
        try:
            await listener.serve(self._handle, tg)
        finally:
            with anyio.CancelScope(shield=True):
                await listener.aclose()

    async def _handle(self, stream: SocketStream) -> None:
        async with stream:
            try:
                with anyio.fail_after(REQUEST_READ_TIMEOUT_S):
                    head = await _read_head(stream)
            except (TimeoutError, anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                return
            parts = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
            target = urlsplit(parts[1]) if len(parts) == 3 and parts[0] == "GET" else None
            if target is None or target.path != CALLBACK_PATH or self._arrived.is_set():
                await _respond(stream, 404, "Not the login callback.")
                return
            query = {k: v[0] for k, v in parse_qs(target.query).items() if v}
            if not self._is_ours(query.get("state")):
                # Never echo either state: the forger must learn nothing, and the login waits on.
                await _respond(stream, 400, "Not this login's redirect: its state does not match.")
                return
            self._result = Redirect(
                code=query.get("code"),
                state=query.get("state"),
                iss=query.get("iss"),
                error=query.get("error"),
                error_description=query.get("error_description"),
            )
            self._arrived.set()
            ok = self._result.error is None and self._result.code is not None
            message = "Login complete." if ok else "Login failed; see the terminal."
            await _respond(stream, 200, message)

    def _is_ours(self, state: str | None) -> bool:
        """Whether `state` is the login's own (compared in constant time)."""
        if self._state is None or state is None:
            return False
        return secrets.compare_digest(state.encode(), self._state.encode())


async def _read_head(stream: SocketStream) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data and b"\n\n" not in data:
        data += await stream.receive()
        if len(data) > MAX_REQUEST_BYTES:
            break
    return data


async def _respond(stream: SocketStream, status: int, message: str) -> None:
    body = _PAGE.format(message=message).encode()
    reason = {200: "OK", 400: "Bad Request"}.get(status, "Not Found")
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    try:
        await stream.send(head + body)
    except (anyio.BrokenResourceError, OSError):
        pass
