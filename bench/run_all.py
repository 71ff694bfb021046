"""Run every benchmark in turn and print one table of ratios, goals and verdicts.

`python bench/run_all.py [--quick] [--skip-peers]`; about 2 minutes in full on 2 cores
(the first run also creates bench/.venv-peers for the peer comparison).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import batch
import call_rate
import check_jobs
import cli_help
import fanout
import grep_engine
import hooks
import isolation
import list_burst
import peers
import sandbox
import secret_reexec
import serve_first_answer
import serve_spawn
import stdio_lines
import store
import stream_mask
from _util import Result, table

BENCHMARKS: dict[str, Callable[[bool], list[Result]]] = {
    "cli_help": cli_help.run,
    "fanout": fanout.run,
    "call_rate": call_rate.run,
    "list_burst": list_burst.run,
    "stdio_lines": stdio_lines.run,
    "peers": peers.run,
    "batch": batch.run,
    "serve_spawn": serve_spawn.run,
    "serve_first_answer": serve_first_answer.run,
    "check_jobs": check_jobs.run,
    "secret_reexec": secret_reexec.run,
    "store": store.run,
    "stream_mask": stream_mask.run,
    "grep_engine": grep_engine.run,
    "sandbox": sandbox.run,
    "hooks": hooks.run,
    "isolation": isolation.run,
}


def main() -> None:
    """Run the benchmarks; a failing one is reported and the rest still run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--skip-peers", action="store_true", help="no openai-agents venv")
    parser.add_argument("--only", action="append", choices=list(BENCHMARKS), help="repeatable")
    args = parser.parse_args()
    chosen = args.only or [n for n in BENCHMARKS if not (args.skip_peers and n == "peers")]
    results: list[Result] = []
    failed: list[str] = []
    for name in chosen:
        print(f"== {name}", flush=True)
        start = time.perf_counter()
        try:
            results += BENCHMARKS[name](args.quick)
        except Exception as exc:  # one broken benchmark must not hide the others' numbers
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
        print(f"   ({time.perf_counter() - start:.0f} s)", flush=True)
    print()
    print(table(results))
    for line in failed:
        print(f"FAILED {line}")
    misses = sum(r.verdict == "MISS" for r in results)
    print(f"\n{len(results)} figures, {misses} goal(s) missed, {len(failed)} benchmark(s) failed")
    # Missed goals are findings, not failures; only a benchmark that broke fails the run.
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
