"""Benchmark: our hand-written model clients ÷ the official `openai` and `anthropic` SDKs.

Why the launcher keeps its own clients, measured (the reason written in
launcher/models/openai.py). Each SDK runs in .interop/venv-peers (bench/requirements-peers.txt),
ours in this interpreter; each ratio is the median of per-pair ratios of interleaved runs.

- import: a process that imports the client ÷ one that imports the SDK (wall time);
- modules: modules the client adds to a process already running the MCP SDK, ours ÷ theirs,
  with the top-level packages each brings (both reuse the MCP SDK's httpx2);
- stream: CPU a process spends reading K streamed Chat Completions replies of N chunks from a
  loopback stub, ours ÷ the `openai` SDK's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from _util import REPO, Result, Size, bench_main, median, pair_ratios, sized

PEERS = REPO / ".interop" / "venv-peers" / "bin" / "python"
SDK_OF = {"openai": "launcher.models.openai", "anthropic": "launcher.models.anthropic"}
"""Each official SDK and our module that does its job."""
RUN_LIMIT_S = 300.0

IMPORT = "import {module}"
MODULES = (
    "import sys, mcp.client.session\n"
    "before = set(sys.modules)\n"
    "import {module}\n"
    "added = set(sys.modules) - before\n"
    "print(len(added), ','.join(sorted({{name.split('.')[0] for name in added}})))"
)
STREAM_OURS = """
import asyncio, time, httpx2
from launcher.models.base import Message, ModelRequest
from launcher.models.openai import OpenAIModel

async def main():
    async def on_text(text):
        pass
    async with httpx2.AsyncClient() as http:
        model = OpenAIModel("m", http=http, api_key="k", base_url="{url}")
        request = ModelRequest(system="", messages=[Message(role="user", content="hi")],
                               tools=[], on_text=on_text)
        await model.complete(request)
        start = time.process_time()
        for _ in range({replies}):
            reply = await model.complete(request)
        assert reply.text.count("tok") == {chunks}, reply.text[:80]
        print(time.process_time() - start)

asyncio.run(main())
"""
STREAM_SDK = """
import asyncio, time, openai

async def main():
    client = openai.AsyncOpenAI(api_key="k", base_url="{url}", max_retries=0)
    async def one():
        text = []
        stream = await client.chat.completions.create(
            model="m", messages=[{{"role": "user", "content": "hi"}}], stream=True)
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                text.append(chunk.choices[0].delta.content)
        return "".join(text)
    await one()
    start = time.process_time()
    for _ in range({replies}):
        text = await one()
    assert text.count("tok") == {chunks}, text[:80]
    print(time.process_time() - start)
    await client.close()

asyncio.run(main())
"""


def _stream_body(chunks: int) -> bytes:
    """One Chat Completions stream: `chunks` text deltas, a stop, usage, [DONE]."""

    def chunk(delta: dict[str, object], finish: str | None = None) -> str:
        data = {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(data)}\n\n"

    parts = [chunk({"role": "assistant", "content": ""})]
    parts += [chunk({"content": "tok "}) for _ in range(chunks)]
    parts.append(chunk({}, "stop"))
    usage = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    usage |= {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": chunks}}
    parts.append(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n")
    return "".join(parts).encode()


@contextmanager
def model_stub(chunks: int) -> Iterator[str]:
    """A loopback server answering every POST with the same streamed reply; yields its base URL."""
    body = _stream_body(chunks)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        thread.join(timeout=5)


def _run(python: Path | str, code: str) -> tuple[float, str]:
    """(wall seconds, stdout) of `python -c code`; it must succeed."""
    start = time.perf_counter()
    proc = subprocess.run(
        [str(python), "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=RUN_LIMIT_S,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{python} -c ... exited {proc.returncode}: {proc.stderr[-800:]}")
    return elapsed, proc.stdout.strip()


def ratio_spread(ratios: list[float]) -> str:
    """`min–max` of per-pair ratios, for the detail column."""
    return f"{min(ratios):.3f}–{max(ratios):.3f}"


def run(size: Size) -> list[Result]:
    if not PEERS.exists():
        print("model_clients: .interop/venv-peers missing (.ci/install-interop.sh): skipped")
        return []
    rounds = sized(size, 15, 7, 1)
    replies, chunks = sized(size, 50, 20, 2), sized(size, 500, 500, 20)
    results: list[Result] = []
    for sdk, ours in SDK_OF.items():
        _run(sys.executable, IMPORT.format(module=ours))  # .pyc files written, as installed
        _run(PEERS, IMPORT.format(module=sdk))
        mine, theirs = [], []
        for _ in range(rounds):
            mine.append(_run(sys.executable, IMPORT.format(module=ours))[0])
            theirs.append(_run(PEERS, IMPORT.format(module=sdk))[0])
        ratios = pair_ratios(mine, theirs)
        results.append(
            Result(
                f"model_clients {sdk}",
                "import: ours ÷ SDK",
                median(ratios),
                detail=f"ours {median(mine) * 1e3:.0f} ms, {sdk} {median(theirs) * 1e3:.0f} ms "
                f"(per-pair {ratio_spread(ratios)})",
            )
        )
        count_ours, packages_ours = _run(sys.executable, MODULES.format(module=ours))[1].split()
        count_sdk, packages_sdk = _run(PEERS, MODULES.format(module=sdk))[1].split()
        results.append(
            Result(
                f"model_clients {sdk}",
                "modules added beside the MCP SDK: ours ÷ SDK",
                int(count_ours) / int(count_sdk),
                detail=f"ours {count_ours} ({packages_ours}), {sdk} {count_sdk} ({packages_sdk})",
            )
        )
    with model_stub(chunks) as url:
        mine, theirs = [], []
        for _ in range(max(1, rounds // 3)):
            code = STREAM_OURS.format(url=url, replies=replies, chunks=chunks)
            mine.append(float(_run(sys.executable, code)[1]))
            code = STREAM_SDK.format(url=url, replies=replies, chunks=chunks)
            theirs.append(float(_run(PEERS, code)[1]))
    ratios = pair_ratios(mine, theirs)
    results.append(
        Result(
            "model_clients openai",
            f"stream CPU ({replies} replies × {chunks} chunks): ours ÷ SDK",
            median(ratios),
            detail=f"ours {median(mine) / replies * 1e3:.2f} ms a reply, openai "
            f"{median(theirs) / replies * 1e3:.2f} ms (per-pair {ratio_spread(ratios)})",
        )
    )
    return results


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
