"""Run every benchmark in turn and print one table of ratios, goals and verdicts.

`python bench/run_all.py [--quick | --smoke] [--skip-peers] [--only NAME]...`; the load
average is printed before and after each benchmark, and the time each took. bench/README.md
says how long each size takes (the first run also creates bench/.venv-peers for the peer
comparison).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import batch
import call_rate
import check_jobs
import cli_help
import fanout
import grep_engine
import hooks
import isolation
import list_burst
import model_clients
import nested_repos
import peers
import sandbox
import secret_reexec
import serve_first_answer
import serve_http
import serve_spawn
import stdio_lines
import store
import stream_mask
import traces
import turn_cost
import worker_channel
from _util import Result, Size, load_line, size_arguments, size_of, table

BENCHMARKS: dict[str, Callable[[Size], list[Result]]] = {
    "cli_help": cli_help.run,
    "fanout": fanout.run,
    "call_rate": call_rate.run,
    "turn_cost": turn_cost.run,
    "list_burst": list_burst.run,
    "stdio_lines": stdio_lines.run,
    "peers": peers.run,
    "batch": batch.run,
    "serve_spawn": serve_spawn.run,
    "serve_first_answer": serve_first_answer.run,
    "serve_http": serve_http.run,
    "check_jobs": check_jobs.run,
    "secret_reexec": secret_reexec.run,
    "store": store.run,
    "stream_mask": stream_mask.run,
    "grep_engine": grep_engine.run,
    "sandbox": sandbox.run,
    "nested_repos": nested_repos.run,
    "hooks": hooks.run,
    "traces": traces.run,
    "isolation": isolation.run,
    "model_clients": model_clients.run,
    "worker_channel": worker_channel.run,
}


@contextmanager
def alone() -> Iterator[None]:
    """One benchmark as if run by itself: the environment and the launcher's runtime it
    found are what the next one finds. In-process benchmarks set variables (a secret-named
    key, SUBAGENT_HOME of a removed directory) that every later child inherited: serve's
    start then re-executed itself to hide the key, 1.4x slower than run alone."""
    from launcher.runtime import Runtime, install

    saved = dict(os.environ)
    previous = install(Runtime())
    try:
        yield
    finally:
        install(previous)
        os.environ.clear()
        os.environ.update(saved)


def main() -> None:
    """Run the benchmarks; a failing one is reported and the rest still run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size_arguments(parser)
    parser.add_argument("--skip-peers", action="store_true", help="no openai-agents venv")
    parser.add_argument("--only", action="append", choices=list(BENCHMARKS), help="repeatable")
    args = parser.parse_args()
    size = size_of(args)
    chosen = args.only or [n for n in BENCHMARKS if not (args.skip_peers and n == "peers")]
    results: list[Result] = []
    failed: list[str] = []
    began = time.perf_counter()
    for name in chosen:
        print(f"== {name} ({load_line()})", flush=True)
        start = time.perf_counter()
        try:
            with alone():
                results += BENCHMARKS[name](size)
        except (Exception, SystemExit) as exc:  # one broken benchmark must not hide the rest
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
        print(f"   ({time.perf_counter() - start:.0f} s)", flush=True)
    print()
    print(table(results))
    for line in failed:
        print(f"FAILED {line}")
    misses = sum(r.verdict == "MISS" for r in results)
    took = time.perf_counter() - began
    print(f"\n{len(results)} figures, {misses} goal(s) missed, {len(failed)} benchmark(s) failed")
    print(f"{size} run: {took:.0f} s; {load_line()}")
    # Missed goals are findings, not failures; only a benchmark that broke fails the run.
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
