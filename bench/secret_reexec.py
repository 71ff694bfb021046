"""Benchmark: the start-up cost of hiding secrets, for each of the two re-execs.

`subagent tools solo --json` with a config whose one server (never started: the agent takes
no extensions) references `${BENCH_ENDPOINT:-}`, wall time, median of interleaved runs, in
three environments: nothing to hide (no re-exec); a credential-named variable (the console
script re-executes before typer is imported: `reexec_early`); and only the config's plain-
named `BENCH_ENDPOINT` (which variable to hide is known only once the config is read, so
the process re-executes from inside config loading: `reexec_hiding`). Each ÷ nothing to
hide. Information only: the numbers behind cli/loading.py's docstring.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from _util import Result, Size, bench_main, median, pair_ratios, sized, spread, state_dir

SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")
SOLO = "---\nname: solo\ntools: [read]\nextensions: false\n---\nAlone.\n"


def run(size: Size = "full") -> list[Result]:
    with state_dir() as root:
        config = root / "cfg"
        (config / "agents").mkdir(parents=True)
        (config / "agents" / "solo.md").write_text(SOLO)
        server = {"command": "true", "env": {"ENDPOINT": "${BENCH_ENDPOINT:-}"}}
        (config / "mcp.json").write_text(json.dumps({"mcpServers": {"remote": server}}))
        plain = {
            k: v
            for k, v in os.environ.items()
            if not any(w in k.upper() for w in SECRET_WORDS) and k != "BENCH_ENDPOINT"
        }
        plain["SUBAGENT_HOME"] = str(root / "home")
        envs = {
            "none": plain,
            "early": {**plain, "OPENAI_API_KEY": "sk-bench-0123456789abcdef"},
            "late": {**plain, "BENCH_ENDPOINT": "https://bench.invalid/v1"},
        }
        cmd = [
            sys.executable,
            *("-m", "launcher.cli", "tools", "solo"),
            *("--config-dir", str(config), "--json"),
        ]
        times: dict[str, list[float]] = {name: [] for name in envs}
        for _ in range(sized(size, 11, 3, 1)):
            for name, env in envs.items():
                start = time.perf_counter()
                subprocess.run(cmd, env=env, check=True, capture_output=True, cwd=root)
                times[name].append(time.perf_counter() - start)
    results = []
    for name, what in (
        ("early", "a credential-named variable: re-exec before typer"),
        ("late", "a config-referenced plain variable: re-exec from config loading"),
    ):
        ratio = median(pair_ratios(times[name], times["none"]))
        detail = f"{what}: {spread(times[name])}; nothing to hide {spread(times['none'])}"
        metric = f"tools: {name} re-exec ÷ none (per-pair ratios)"
        results.append(Result(f"secret_reexec_{name}", metric, ratio, None, detail))
    return results


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
