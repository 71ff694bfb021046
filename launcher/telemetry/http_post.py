"""HTTP/1.1 POSTs over one kept-alive connection, on the stdlib's sockets (and ssl).

What the OTLP exporter needs and no more: send a body, read the status, the headers and
the body (by length, chunked, or to the close). `http.client` would do it too, but it
loads the `email` package to parse headers: several milliseconds of every traced run.
"""

from __future__ import annotations

import socket
import ssl

MAX_LINE = 65536
MAX_HEADERS = 100


class HttpError(OSError):
    """The server's answer is not HTTP/1.x as expected (the connection is then dropped)."""


class Answer:
    """A response: status, reason, headers (names lower-cased), whether the server closes."""

    def __init__(self, status: int, reason: str, headers: dict[str, str], closes: bool) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self.closes = closes


def valid_header(name: str, value: str) -> bool:
    """A header line that cannot split the request: no CR, LF or NUL, a name without `:`."""
    bad = ("\r", "\n", "\0")
    return bool(name) and ":" not in name and not any(c in name + value for c in bad)


def _address(host: str) -> str | bytes:
    """`host` for the resolver: an ASCII name as bytes, which it takes as they are; a str
    would be IDNA-encoded, and loading that codec costs every traced run a millisecond."""
    return host.encode("ascii") if host.isascii() else host


class Connection:
    """One connection to `host`:`port` (TLS with `tls`); `post` may be called again while
    the server keeps it open."""

    def __init__(self, host: str, port: int, tls: ssl.SSLContext | None, timeout: float) -> None:
        # typeshed says str, but getaddrinfo (which create_connection calls) takes bytes too
        sock = socket.create_connection((_address(host), port), timeout)  # type: ignore[arg-type]
        try:
            self._sock = tls.wrap_socket(sock, server_hostname=host) if tls else sock
        except BaseException:
            sock.close()
            raise
        self._file = self._sock.makefile("rb")
        default = 443 if tls else 80
        name = f"[{host}]" if ":" in host else host
        self.host_header = name if port == default else f"{name}:{port}"

    def post(self, path: str, headers: dict[str, str], body: bytes, timeout: float) -> Answer:
        """Send one POST and read its whole answer (interim 1xx answers skipped)."""
        self._sock.settimeout(timeout)
        lines = [f"POST {path} HTTP/1.1", f"Host: {self.host_header}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines.append(f"Content-Length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self._sock.sendall(head + body)
        while True:
            answer = self._read_head()
            if not 100 <= answer.status < 200:
                break
        self._read_body(answer)
        return answer

    def _line(self) -> bytes:
        line = self._file.readline(MAX_LINE + 1)
        if not line:
            raise HttpError("the server closed the connection")
        if len(line) > MAX_LINE:
            raise HttpError("an answer line is too long")
        return line

    def _read_head(self) -> Answer:
        version, _, rest = self._line().decode("latin-1").strip().partition(" ")
        code, _, reason = rest.partition(" ")
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise HttpError(f"not an HTTP/1.x answer: {version} {code}")
        headers: dict[str, str] = {}
        for _ in range(MAX_HEADERS):
            line = self._line().decode("latin-1")
            if line in ("\r\n", "\n"):
                break
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        else:
            raise HttpError("too many headers in the answer")
        connection = headers.get("connection", "").lower()
        closes = "close" in connection or (version == "HTTP/1.0" and "keep-alive" not in connection)
        return Answer(int(code), reason, headers, closes)

    def _read_body(self, answer: Answer) -> None:
        """Read (and drop) the body, so the connection can carry the next request."""
        if answer.status in (204, 304):
            return
        if "chunked" in answer.headers.get("transfer-encoding", "").lower():
            while size := int(self._line().split(b";")[0].strip() or b"0", 16):
                self._exactly(size + 2)  # the chunk and its CRLF
            while self._line() not in (b"\r\n", b"\n"):
                pass  # trailers
            return
        length = answer.headers.get("content-length")
        if length is not None and length.isdigit():
            self._exactly(int(length))
            return
        answer.closes = True  # delimited by the close
        while self._file.read(MAX_LINE):
            pass

    def _exactly(self, size: int) -> None:
        while size > 0:
            chunk = self._file.read(min(size, MAX_LINE))
            if not chunk:
                raise HttpError("the server closed the connection mid-answer")
            size -= len(chunk)

    def close(self) -> None:
        """Close the connection (the next POST needs a new one)."""
        self._file.close()
        self._sock.close()
