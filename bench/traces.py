"""Benchmark: what traces cost: a 50-turn spawn exporting ÷ not; `--help` with an endpoint.

1. `subagent spawn` of a 50-turn scripted run, CPU time (user + system of the launcher
   and what it reaped: its stub server), with OTEL_EXPORTER_OTLP_ENDPOINT at a loopback
   OTLP receiver ÷ without; each turn one call: to the fast stub's `echo` (an MCP call,
   so the SDK's client span is exported too), and, as a second case, to the built-in `ls`
   (no MCP server: the launcher's own start-up is smaller, so the exporter's import
   weighs more). Median of per-pair ratios, the pairs' order alternating. Goal ≤ 1.05.
2. The fixed part of (1): `telemetry.start()` in a fresh interpreter, CPU with the endpoint
   set − unset (the OTel SDK and our OTLP/HTTP exporter), in seconds; no goal. Beside it,
   what the SDK's own OTLP exporter (protobuf runtime, `requests`) would add to it.
3. `subagent --help` CPU time with the endpoint set ÷ unset (nothing is set up for help);
   median of per-pair ratios. Goal ≤ 1.02.
The load average is printed beside them: other work on the machine moves CPU time too.

`--instructions`: (1) again, counted in instructions instead of CPU time, which load does
not move: valgrind's cachegrind (`--cache-sim=no`), the launcher and every process it
starts, summed; 2 pairs (1 with --quick/--smoke). Under valgrind a run lasts ~100× longer,
so both runs get OTEL_BSP_SCHEDULE_DELAY=600000: the spans go in one batch at the end, as
in a run at full speed, not in one batch every 5 s of the slowed run. Whole runs still
vary by a few percent under valgrind (the slowed run's timers and polls fire more or less
often), so read a ratio near the goal with several pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from _util import (
    Result,
    Size,
    fast_stub_args,
    load_line,
    median,
    pair_ratios,
    size_arguments,
    size_of,
    sized,
    state_dir,
    table,
)
from cli_help import check_runs, subagent_cmd

TURNS = 50
SMOKE_TURNS = 3
SPAWN_PAIRS = 11
QUICK_SPAWN_PAIRS = 3
HELP_PAIRS = 21
QUICK_HELP_PAIRS = 5
SPAWN_GOAL = 1.05
HELP_GOAL = 1.02
RUN_LIMIT_S = 120.0
"""Bounds one measured run; a 50-turn scripted spawn takes a few seconds on 2 loaded cores."""
INSTRUCTION_PAIRS = 2
UNDER_VALGRIND_LIMIT_S = 1800.0
"""Bounds one run under cachegrind (about a minute for 50 turns on 2 loaded cores)."""
BATCH_AT_THE_END = {"OTEL_BSP_SCHEDULE_DELAY": "600000"}
RECEIVER_POLL_S = 0.05
"""How often the receiver's serve loop checks for shutdown."""


class Sink:
    """A loopback OTLP/HTTP endpoint that answers 200 and counts what it was sent."""

    def __init__(self) -> None:
        sink = self
        self.posts = 0
        self.bytes = 0

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                sink.posts += 1
                sink.bytes += len(body)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def endpoint(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"


@contextmanager
def sink() -> Iterator[Sink]:
    receiver = Sink()
    thread = threading.Thread(
        target=receiver.server.serve_forever, args=(RECEIVER_POLL_S,), daemon=True
    )
    thread.start()
    try:
        yield receiver
    finally:
        receiver.server.shutdown()
        receiver.server.server_close()
        thread.join()


def cpu_seconds(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    """User + system CPU seconds of one run of `cmd` (and of the children it reaped)."""
    proc = subprocess.Popen(
        cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except BaseException:
        proc.kill()
        raise
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        assert proc.stderr is not None
        raise SystemExit(f"{cmd} exited {proc.returncode}: {proc.stderr.read()[-500:]!r}")
    return usage.ru_utime + usage.ru_stime


def write_setup(root: Path, turns: int) -> tuple[Path, Path, Path]:
    """A config with the fast stub, a `turns`-turn script calling its echo, one calling `ls`."""
    config = root / "cfg"
    (config / "agents").mkdir(parents=True)
    server = {"command": sys.executable, "args": fast_stub_args()}
    (config / "mcp.json").write_text(json.dumps({"mcpServers": {"fast": server}}))
    mcp = root / "mcp.yaml"
    step = "  - call: [{tool: fast__echo, args: {text: 'turn output, a line of text'}}]\n"
    mcp.write_text("steps:\n" + step * (turns - 1) + "  - say: all turns done\n")
    builtin = root / "builtin.yaml"
    step = "  - call: [{tool: ls, args: {path: .}}]\n"
    builtin.write_text("steps:\n" + step * (turns - 1) + "  - say: all turns done\n")
    return config, mcp, builtin


def pairs(
    on: tuple[list[str], dict[str, str]],
    off: tuple[list[str], dict[str, str]],
    count: int,
    cwd: Path,
) -> tuple[list[float], list[float], list[float]]:
    """`count` interleaved pairs of CPU times (the order turning each pair); their ratios."""
    ons: list[float] = []
    offs: list[float] = []
    for i in range(count):
        order = ((ons, on), (offs, off)) if i % 2 else ((offs, off), (ons, on))
        for sample, (cmd, env) in order:
            sample.append(cpu_seconds(cmd, env, cwd))
    return ons, offs, pair_ratios(ons, offs)


def spread_s(values: list[float]) -> str:
    return f"{median(values) * 1000:.0f} ms [{min(values) * 1000:.0f}–{max(values) * 1000:.0f}]"


def instructions(cmd: list[str], env: dict[str, str], cwd: Path, out: Path) -> int:
    """Instructions executed by one run of `cmd` and every process it started (cachegrind)."""
    for old in out.glob("cg.*"):
        old.unlink()
    valgrind = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--trace-children=yes",
        f"--cachegrind-out-file={out}/cg.%p",
    ]
    done = subprocess.run(
        [*valgrind, *cmd],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=UNDER_VALGRIND_LIMIT_S,
    )
    if done.returncode != 0:
        raise SystemExit(f"{cmd} exited {done.returncode}: {done.stderr[-500:]!r}")
    total = 0
    for path in out.glob("cg.*"):
        for line in path.read_text().splitlines():
            if line.startswith("summary:"):
                total += int(line.split()[1])
    if total == 0:
        raise SystemExit(f"cachegrind counted nothing for {cmd}")
    return total


def spawn_command(cli: list[str], config: Path, script: Path) -> list[str]:
    return [*cli, "spawn", "--config-dir", str(config), "--model", f"scripted:{script}", "go"]


def run_instructions(size: Size = "full") -> list[Result]:
    """(1) in instructions: exporting ÷ not, per alternating pair, their median."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (its cachegrind tool) on PATH")
    cli = subagent_cmd()
    base_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OTEL_", "SUBAGENT_")) and k != "TRACEPARENT"
    }
    results: list[Result] = []
    turns = sized(size, TURNS, TURNS, SMOKE_TURNS)
    count = sized(size, INSTRUCTION_PAIRS, 1, 1)
    with state_dir() as root, sink() as receiver:
        config, mcp_script, builtin_script = write_setup(root, turns)
        out = root / "cachegrind"
        out.mkdir()
        off_env = {
            **base_env,
            **BATCH_AT_THE_END,
            "SUBAGENT_HOME": str(root / "home"),
            "SUBAGENT_STORE": "0",
        }
        on_env = {**off_env, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
        for label, script in (("MCP echo", mcp_script), ("built-in ls", builtin_script)):
            cmd = spawn_command(cli, config, script)
            cpu_seconds(cmd, off_env, root)  # warm-up: .pyc files, page cache
            ons: list[float] = []
            offs: list[float] = []
            for i in range(count):
                order = (
                    ((ons, on_env), (offs, off_env)) if i % 2 else ((offs, off_env), (ons, on_env))
                )
                for sample, env in order:
                    sample.append(float(instructions(cmd, env, root, out)))
            ratios = pair_ratios(ons, offs)
            extra = median([a - b for a, b in zip(ons, offs, strict=True)])
            print(
                f"{turns}-turn spawn ({label}): traced {median(ons) / 1e6:.0f} M instructions, "
                f"not {median(offs) / 1e6:.0f} M (+{extra / 1e6:.0f} M)"
            )
            results.append(
                Result(
                    "traces",
                    f"{turns}-turn spawn, {label} a turn: instructions exporting ÷ not",
                    median(ratios),
                    SPAWN_GOAL,
                    f"on {median(ons) / 1e6:.0f} M; off {median(offs) / 1e6:.0f} M; "
                    f"{count} pair(s), cachegrind",
                )
            )
    return results


def run(size: Size = "full") -> list[Result]:
    cli = subagent_cmd()
    base_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OTEL_", "SUBAGENT_")) and k != "TRACEPARENT"
    }
    results: list[Result] = []
    turns = sized(size, TURNS, TURNS, SMOKE_TURNS)
    spawn_pairs = sized(size, SPAWN_PAIRS, QUICK_SPAWN_PAIRS, 1)
    help_pairs = sized(size, HELP_PAIRS, QUICK_HELP_PAIRS, 1)
    with state_dir() as root, sink() as receiver:
        config, mcp_script, builtin_script = write_setup(root, turns)
        off_env = {**base_env, "SUBAGENT_HOME": str(root / "home"), "SUBAGENT_STORE": "0"}
        on_env = {**off_env, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
        for label, script in (("MCP echo", mcp_script), ("built-in ls", builtin_script)):
            cmd = [
                *cli,
                "spawn",
                "--config-dir",
                str(config),
                "--model",
                f"scripted:{script}",
                "go",
            ]
            for env in (off_env, on_env):  # warm-up: .pyc files, page cache
                cpu_seconds(cmd, env, root)
            before = receiver.posts
            ons, offs, ratios = pairs((cmd, on_env), (cmd, off_env), spawn_pairs, root)
            assert receiver.posts > before, "the traced runs exported nothing"
            print(f"{turns}-turn spawn ({label}): traced {spread_s(ons)}, not {spread_s(offs)}")
            results.append(
                Result(
                    "traces",
                    f"{turns}-turn spawn, {label} a turn: CPU exporting ÷ not",
                    median(ratios),
                    SPAWN_GOAL,
                    f"on {spread_s(ons)}; off {spread_s(offs)}; {load_line()}",
                )
            )
        start = [sys.executable, "-c", "from launcher import telemetry; telemetry.start()"]
        ons, offs, _ = pairs((start, on_env), (start, off_env), help_pairs, root)
        fixed = median([a - b for a, b in zip(ons, offs, strict=True)])
        print(f"set-up of export: {fixed * 1000:.0f} ms CPU (imports of the SDK and exporter)")
        results.append(
            Result(
                "traces",
                "set-up of export a process: CPU seconds, endpoint set − unset (no goal)",
                fixed,
                None,
                f"set {spread_s(ons)}; unset {spread_s(offs)}; {load_line()}",
            )
        )
        # The SDK's own OTLP/HTTP exporter, as a proxy variable still selects it (and as
        # every traced process loaded it before the encoder of our own): its extra cost.
        sdk_env = {**on_env, "https_proxy": "http://127.0.0.1:9"}
        sdk, ours, _ = pairs((start, sdk_env), (start, on_env), help_pairs, root)
        extra = median([a - b for a, b in zip(sdk, ours, strict=True)])
        print(f"set-up with the SDK's OTLP exporter instead: {extra * 1000:+.0f} ms CPU")
        results.append(
            Result(
                "traces",
                "set-up with the SDK's OTLP/HTTP exporter − ours: CPU seconds (no goal)",
                extra,
                None,
                f"SDK's {spread_s(sdk)}; ours {spread_s(ours)}; {load_line()}",
            )
        )
        help_cmd = [*cli, "--help"]
        check_runs(help_cmd)
        ons, offs, ratios = pairs((help_cmd, on_env), (help_cmd, off_env), help_pairs, root)
        print(f"--help: endpoint set {spread_s(ons)}, unset {spread_s(offs)}")
        results.append(
            Result(
                "traces",
                "`subagent --help` CPU, endpoint set ÷ unset",
                median(ratios),
                HELP_GOAL,
                f"set {spread_s(ons)}; unset {spread_s(offs)}; {load_line()}",
            )
        )
    return results


def main() -> None:
    """`--quick`/`--smoke`, and `--instructions` for the instruction counts instead."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size_arguments(parser)
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="the spawn ratios in instructions (valgrind's cachegrind), which load does not move",
    )
    args = parser.parse_args()
    print(load_line(), flush=True)
    results = (run_instructions if args.instructions else run)(size_of(args))
    print()
    print(table(results))
    print(load_line())
    sys.stdout.flush()


if __name__ == "__main__":
    main()
