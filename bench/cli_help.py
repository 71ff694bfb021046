"""Benchmark 1: `subagent --help` wall time ÷ `python -c "import typer"` (goal ≤ 1.3).

The median of per-round ratios (each round runs every case once, interleaved, so load from
elsewhere hits a pair alike). Also reports, from `-X importtime`, whether `--help` imported
the MCP SDK (it must not).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from _util import Result, Size, bench_main, median, pair_ratios, sized, spread

HEAVY = ("mcp", "mcp_types", "httpx", "httpx2", "pydantic", "rich", "yaml", "anyio")
"""Top-level packages whose presence in `--help` would show a slow start-up path."""


def subagent_cmd() -> list[str]:
    """The console script installed beside this interpreter; else the module's main.

    Not `shutil.which`: that may find a version manager's shell shim, whose own start-up
    would be measured too.
    """
    script = Path(sysconfig.get_path("scripts")) / "subagent"
    if script.is_file():
        return [sys.executable, str(script)]
    return [sys.executable, "-c", "from launcher.cli.app import main; main()"]


def check_runs(cmd: list[str], env: dict[str, str] | None = None) -> None:
    """Refuse to time a command that fails: a fast failure would look like a fast start.

    This first run also writes the launcher's .pyc files, as an installed copy has them (pip
    compiles at install), even where PYTHONDONTWRITEBYTECODE is set: without them every
    timed run would compile the CLI's modules from source, which typer's side never does.
    """
    env = {k: v for k, v in (env or os.environ).items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} exited {proc.returncode}: {proc.stderr[-500:]}")


def wall(cmd: list[str], env: dict[str, str] | None = None) -> float:
    """Seconds one run of `cmd` takes, output discarded; it must succeed (a fast failure
    would look like a fast start)."""
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, check=False
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} exited {proc.returncode}: {proc.stderr[-500:]!r}")
    return elapsed


def imported_packages(cmd: list[str]) -> dict[str, int]:
    """Top-level packages `cmd` imported, with their cumulative import time in µs."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    found: dict[str, int] = {}
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = (part.strip() for part in line.split("|"))
        if not cumulative.isdigit():
            continue  # the header line
        top = name.strip().split(".")[0]
        found[top] = max(found.get(top, 0), int(cumulative))
    return found


def run(size: Size = "full") -> list[Result]:
    n = sized(size, 15, 5, 2)
    cli = subagent_cmd()
    cases = {
        "subagent --help": [*cli, "--help"],
        "subagent spawn --help": [*cli, "spawn", "--help"],
        "import typer": [sys.executable, "-c", "import typer"],
    }
    times: dict[str, list[float]] = {k: [] for k in cases}
    for cmd in cases.values():  # also warms the page cache and .pyc files
        check_runs(cmd)
    for _ in range(n):
        for name, cmd in cases.items():  # interleaved, so drift hits every case alike
            times[name].append(wall(cmd))
    base = times["import typer"]
    for name, sample in times.items():
        print(f"{name:24s} {spread(sample)}  (n={n})")
    rows = [
        Result(
            "1 cli start-up",
            "`subagent --help` ÷ `import typer` (median of per-round ratios)",
            median(pair_ratios(times["subagent --help"], base)),
            1.3,
            f"{spread(times['subagent --help'])} vs {spread(times['import typer'])}",
        )
    ]
    for label, args in (("--help", ["--help"]), ("spawn --help", ["spawn", "--help"])):
        packages = imported_packages([*cli, *args])
        heavy = ", ".join(f"{p} {packages[p] / 1000:.0f} ms" for p in HEAVY if p in packages)
        print(f"heavy packages imported by `subagent {label}`: {heavy or 'none'}")
        sdk = [p for p in ("mcp", "mcp_types") if p in packages]
        rows.append(
            Result(
                "1 cli start-up",
                f"SDK packages imported by `subagent {label}`",
                float(len(sdk)),
                0,
                f"SDK: {', '.join(sdk) or 'none'}; other heavy: {heavy or 'none'}",
            )
        )
    rows.append(
        Result(
            "1 cli start-up",
            "`subagent spawn --help` ÷ `import typer` (no goal)",
            median(pair_ratios(times["subagent spawn --help"], base)),
            None,
            spread(times["subagent spawn --help"]),
        )
    )
    return rows


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
