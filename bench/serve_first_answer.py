"""Benchmark 12: how soon `subagent serve` answers a host: its first `tools/list` answer
÷ `python -c "import typer"`, whole processes, alternating pairs (goal ≤ 2.0).

A host starts serve and pipelines `initialize`, `initialized` and `tools/list` at once (as
Claude Code and Codex do); the time is from the start of the process to the `tools/list`
answer on its stdout. `initialize`'s own time is shown beside it. Run with another
checkout's interpreter (`/other/.venv/bin/python bench/serve_first_answer.py`) to measure
that tree's serve the same way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from _util import Result, bench_main, median, spread, state_dir
from cli_help import subagent_cmd, wall

PAIRS = 7
QUICK_PAIRS = 5
LIMIT_S = 60.0
BASELINE = [sys.executable, "-c", "import typer"]
HELLO = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench-host", "version": "1"},
}
WIRE = "".join(
    json.dumps(m) + "\n"
    for m in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    )
).encode()


def first_answers(cmd: list[str], root: Path) -> tuple[float, float]:
    """Seconds from start to serve's `initialize` answer and to its `tools/list` answer."""
    env = {**os.environ, "SUBAGENT_HOME": str(root / "home")}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=root,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(WIRE)
    proc.stdin.flush()
    seen: dict[int, float] = {}
    deadline = start + LIMIT_S
    try:
        while 2 not in seen and time.perf_counter() < deadline:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit(f"serve ended before answering tools/list: {cmd}")
            seen[json.loads(line).get("id")] = time.perf_counter() - start
    finally:
        proc.stdin.close()  # the host leaves: serve ends (and its spare with it)
        proc.wait(timeout=LIMIT_S)
    return seen[1], seen[2]


def run(quick: bool) -> list[Result]:
    """Serve's first answers against the bare typer import, alternating."""
    with state_dir() as root:
        (root / "cfg" / "agents").mkdir(parents=True)
        (root / "cfg" / "mcp.json").write_text('{"mcpServers": {}}')
        (root / "cfg" / "agents" / "helper.md").write_text(
            "---\nname: helper\ndescription: Helps.\n---\nHelp.\n"
        )
        cmd = [*subagent_cmd(), "serve", "--config-dir", str(root / "cfg")]
        first_answers(cmd, root)  # warms the page cache
        base: list[float] = []
        init: list[float] = []
        listed: list[float] = []
        for _ in range(QUICK_PAIRS if quick else PAIRS):
            base.append(wall(BASELINE))
            i, t = first_answers(cmd, root)
            init.append(i)
            listed.append(t)
    typer_s = median(base)
    return [
        Result(
            "12 serve start",
            'serve\'s first tools/list answer ÷ python -c "import typer"',
            median(listed) / typer_s,
            2.0,
            f"{spread(listed)} vs typer {spread(base)}",
        ),
        Result(
            "12 serve start",
            "serve's initialize answer, ms",
            float(round(median(init) * 1000)),
            None,
            spread(init),
        ),
    ]


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
