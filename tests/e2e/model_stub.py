"""A loopback HTTP server that speaks the OpenAI and Anthropic streaming wire formats.

Tests queue responses and read back what was requested:

    with ModelStub() as stub:
        stub.enqueue(error_response(429, "slow down", retry_after="2"),
                     openai_stream(text="hi", tool_calls=[("c1", "ls", {"path": "."})]))
        model = OpenAIModel("m", http=client, api_key=None, base_url=stub.openai_base)
        ...
        assert stub.requests[1].body["tools"]

The server runs in a thread of the test process, so a subprocess (the CLI) can use
it too: point OPENAI_BASE_URL at `stub.openai_base` or ANTHROPIC_BASE_URL at
`stub.anthropic_base`.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STUB_SHUTDOWN_S = 5.0
"""Join timeout for the server thread; requests in flight finish well within it."""

POLL_INTERVAL_S = 0.02
"""How often the serve loop checks for shutdown; the default 0.5 s slows every test."""

ToolCallSpec = tuple[str, str, dict[str, Any]]
"""(id, name, arguments) of a tool call the stub model makes."""


@dataclass
class StubResponse:
    """One queued response: a status, headers and either SSE events or a plain body."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    events: list[str] | None = None
    body: bytes = b""
    hold_s: float = 0.0
    """After the events, keep the connection open and silent this long (a stalled stream)."""


STALL_HOLD_S = 60.0
"""A stalled stream stays silent this long (or until the stub closes): past any idle limit."""


def stalled(response: StubResponse, keep: int) -> StubResponse:
    """`response` cut after its first `keep` events, then silent with the connection open:
    a model stream that stops mid-reply."""
    assert response.events is not None
    return StubResponse(
        status=response.status,
        headers=dict(response.headers),
        events=response.events[:keep],
        hold_s=STALL_HOLD_S,
    )


@dataclass
class RecordedRequest:
    """A request the stub received; `body` is the parsed JSON (None if not JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


def sse(data: Any, event: str | None = None) -> str:
    """One SSE event block carrying `data` as JSON (or verbatim when a str)."""
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n"


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def openai_stream(
    text: str = "",
    tool_calls: Sequence[ToolCallSpec] = (),
    usage: tuple[int, int] = (10, 5),
    piece: int = 4,
    model: str = "stub-model",
    cached: int = 0,
) -> StubResponse:
    """A Chat Completions stream: text in `piece`-sized deltas, then each tool call's
    arguments JSON in fragments, then a usage-only chunk (`cached` of the prompt tokens
    read from the cache, in `prompt_tokens_details`) and `[DONE]`."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse({"id": "chatcmpl-stub", "model": model, "choices": [choice]})

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": part}) for part in _pieces(text, piece)]
    for index, (call_id, name, args) in enumerate(tool_calls):
        head = {"index": index, "id": call_id, "type": "function"}
        head["function"] = {"name": name, "arguments": ""}
        events.append(chunk({"tool_calls": [head]}))
        for part in _pieces(json.dumps(args), piece):
            events.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
            )
    events.append(chunk({}, "tool_calls" if tool_calls else "stop"))
    prompt, completion = usage
    events.append(
        sse(
            {
                "id": "chatcmpl-stub",
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    "prompt_tokens_details": {"cached_tokens": cached},
                },
            }
        )
    )
    events.append(sse("[DONE]"))
    return StubResponse(headers={"Content-Type": "text/event-stream"}, events=events)


def anthropic_stream(
    text: str = "",
    tool_calls: Sequence[ToolCallSpec] = (),
    usage: tuple[int, int] = (10, 5),
    piece: int = 4,
    model: str = "stub-model",
    cache: tuple[int, int] = (0, 0),
) -> StubResponse:
    """A Messages API stream: a text block in deltas, then tool_use blocks whose input
    arrives as input_json_delta fragments, usage in message_start and message_delta
    (`cache`: tokens written to and read from the cache, beside the `usage` input)."""
    input_tokens, output_tokens = usage
    written, read = cache
    message = {
        "id": "msg_stub",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "usage": {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
            "output_tokens": 1,
        },
    }
    events = [sse({"type": "message_start", "message": message}, "message_start")]
    events.append(sse({"type": "ping"}, "ping"))
    index = 0
    if text:
        start = {"type": "content_block_start", "index": 0}
        start["content_block"] = {"type": "text", "text": ""}
        events.append(sse(start, "content_block_start"))
        for part in _pieces(text, piece):
            delta = {"type": "content_block_delta", "index": 0}
            delta["delta"] = {"type": "text_delta", "text": part}
            events.append(sse(delta, "content_block_delta"))
        events.append(sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
        index = 1
    for offset, (call_id, name, args) in enumerate(tool_calls):
        at = index + offset
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        events.append(
            sse(
                {"type": "content_block_start", "index": at, "content_block": block},
                "content_block_start",
            )
        )
        for part in _pieces(json.dumps(args), piece):
            delta = {"type": "input_json_delta", "partial_json": part}
            events.append(
                sse(
                    {"type": "content_block_delta", "index": at, "delta": delta},
                    "content_block_delta",
                )
            )
        events.append(sse({"type": "content_block_stop", "index": at}, "content_block_stop"))
    stop = "tool_use" if tool_calls else "end_turn"
    events.append(
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
            "message_delta",
        )
    )
    events.append(sse({"type": "message_stop"}, "message_stop"))
    return StubResponse(headers={"Content-Type": "text/event-stream"}, events=events)


def error_response(
    status: int, message: str, *, retry_after: str | None = None, kind: str = "api_error"
) -> StubResponse:
    """A JSON error body shaped like both providers' (`{"error": {"message", "type"}}`)."""
    headers = {"Content-Type": "application/json"}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    body = json.dumps({"type": "error", "error": {"type": kind, "message": message}})
    return StubResponse(status=status, headers=headers, body=body.encode())


class ModelStub:
    """The stub server: queue responses with `enqueue`, read `requests` afterwards.

    An empty queue answers 500 "stub: no response queued", so a test that asks for
    more turns than it scripted fails loudly instead of hanging.
    """

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._queue: deque[StubResponse] = deque()
        self._lock = threading.Lock()
        self.closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(POLL_INTERVAL_S,), daemon=True
        )

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`, the Anthropic-style base URL."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base(self) -> str:
        """The base URL an OpenAI-compatible client expects (ends in `/v1`)."""
        return f"{self.url}/v1"

    @property
    def anthropic_base(self) -> str:
        """The base URL an Anthropic client expects (no `/v1`)."""
        return self.url

    def enqueue(self, *responses: StubResponse) -> None:
        """Answer the next requests with `responses`, in order."""
        with self._lock:
            self._queue.extend(responses)

    def pending(self) -> int:
        """Responses queued but not yet served."""
        with self._lock:
            return len(self._queue)

    def __enter__(self) -> ModelStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing.set()  # stalled streams end
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(STUB_SHUTDOWN_S)

    def _next(self, request: RecordedRequest) -> StubResponse:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
        return error_response(500, "stub: no response queued")

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                headers = {key.lower(): value for key, value in self.headers.items()}
                recorded = RecordedRequest("POST", self.path, headers, body)
                response = stub._next(recorded)
                _write(self, response)
                if response.hold_s:
                    stub.closing.wait(response.hold_s)

            def log_message(self, format: str, *args: Any) -> None:
                # Keep test output clean; the recorded requests are the log.
                pass

        return Handler


def _write(handler: BaseHTTPRequestHandler, response: StubResponse) -> None:
    handler.send_response(response.status)
    for key, value in response.headers.items():
        handler.send_header(key, value)
    handler.send_header("Connection", "close")
    if response.events is None:
        handler.send_header("Content-Length", str(len(response.body)))
        handler.end_headers()
        handler.wfile.write(response.body)
        return
    handler.send_header("Cache-Control", "no-cache")
    handler.end_headers()
    # One write and flush per event, so the client really sees a stream.
    for event in _encoded(response.events):
        handler.wfile.write(event)
        handler.wfile.flush()


def _encoded(events: Iterable[str]) -> Iterable[bytes]:
    return (event.encode("utf-8") for event in events)
