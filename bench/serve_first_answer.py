"""Benchmark 12: how soon `subagent serve` answers a host, as whole processes, per-pair ratios.

1. Its first `tools/list` answer ÷ `python -c "import typer"` (goal ≤ 2.0): a host starts serve
   and pipelines `initialize`, `initialized` and `tools/list` at once (as Claude Code and Codex
   do); the time is from the start of the process to the `tools/list` answer on its stdout.
   `initialize`'s own time is shown beside it.
2. Its first real answer ÷ the same agent's `subagent spawn` as a whole process (goal ≤ 1.3):
   the host pipelines a foreground `spawn_subagent` of a scripted agent without servers
   behind the handshake; the time is from serve's start to that call's result. The wait a
   host's first delegation sees, against running the agent by hand.

Each ratio is the median of per-pair ratios of alternating runs (load hits both of a pair
alike); the load average is printed. Run with another checkout's interpreter
(`/other/.venv/bin/python bench/serve_first_answer.py`) to measure that tree the same way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from _util import Result, Size, bench_main, load_line, median, pair_ratios, sized, spread, state_dir
from cli_help import check_runs, subagent_cmd, wall

LIMIT_S = 60.0
"""Bounds one run; serve answers in about a second."""
BASELINE = [sys.executable, "-c", "import typer"]
HELLO = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench-host", "version": "1"},
}
HANDSHAKE = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]
SPAWN = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "spawn_subagent", "arguments": {"prompt": "go", "agent": "helper"}},
}
AGENT = "---\nname: helper\ndescription: Helps.\nmodel: scripted:../done.yaml\n---\nHelp.\n"


def _wire(messages: list[dict[str, object]]) -> bytes:
    return "".join(json.dumps(m) + "\n" for m in messages).encode()


def answers(
    cmd: list[str], root: Path, messages: list[dict[str, object]], last: int
) -> dict[int, float]:
    """Seconds from serve's start to each answer, until the answer to id `last`."""
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
    proc.stdin.write(_wire(messages))
    proc.stdin.flush()
    seen: dict[int, float] = {}
    deadline = start + LIMIT_S
    try:
        while last not in seen and time.perf_counter() < deadline:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit(f"serve ended before answering id {last}: {cmd}")
            message = json.loads(line)
            if "id" in message:
                if message.get("error") or (message.get("result") or {}).get("isError"):
                    raise SystemExit(f"serve answered id {message['id']} with an error: {line!r}")
                seen[message["id"]] = time.perf_counter() - start
    finally:
        proc.stdin.close()  # the host leaves: serve ends (and its spare with it)
        proc.wait(timeout=LIMIT_S)
    return seen


def write_config(root: Path) -> Path:
    """A config whose one agent runs a one-step script; no servers."""
    (root / "cfg" / "agents").mkdir(parents=True)
    (root / "cfg" / "mcp.json").write_text('{"mcpServers": {}}')
    (root / "cfg" / "agents" / "helper.md").write_text(AGENT)
    (root / "cfg" / "done.yaml").write_text("steps:\n  - say: done\n")
    return root / "cfg"


def run(size: Size = "full") -> list[Result]:
    """Serve's first answers against their baselines, alternating pairs."""
    pairs = sized(size, 7, 3, 1)
    with state_dir() as root:
        config = write_config(root)
        serve = [*subagent_cmd(), "serve", "--config-dir", str(config)]
        spawn = [*subagent_cmd(), "spawn", "--config-dir", str(config), "helper", "go"]
        env = {**os.environ, "SUBAGENT_HOME": str(root / "home")}
        check_runs(spawn, env=env)  # also writes the .pyc files, as an installed copy has them
        answers(serve, root, [*HANDSHAKE, SPAWN], 3)  # warms the page cache
        typer: list[float] = []
        init: list[float] = []
        listed: list[float] = []
        spawned: list[float] = []
        first: list[float] = []
        for _ in range(pairs):
            typer.append(wall(BASELINE))
            seen = answers(serve, root, HANDSHAKE, 2)
            init.append(seen[1])
            listed.append(seen[2])
            spawned.append(wall(spawn, env=env))
            first.append(answers(serve, root, [*HANDSHAKE, SPAWN], 3)[3])
    print(load_line())
    return [
        Result(
            "12 serve start",
            'serve\'s first tools/list answer ÷ python -c "import typer" (median of pairs)',
            median(pair_ratios(listed, typer)),
            2.0,
            f"{spread(listed)} vs typer {spread(typer)}",
        ),
        Result(
            "12 serve start",
            "serve's initialize answer, ms",
            float(round(median(init) * 1000)),
            None,
            spread(init),
        ),
        Result(
            "12 serve start",
            "serve start to its first spawn_subagent result ÷ `subagent spawn` of the same "
            "scripted agent, whole processes (median of pairs)",
            median(pair_ratios(first, spawned)),
            1.3,
            f"{spread(first)} vs spawn {spread(spawned)}",
        ),
    ]


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
