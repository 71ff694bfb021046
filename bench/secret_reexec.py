"""Benchmark: the start-up cost of hiding secrets (issue 15).

`subagent tools --json` with a trivial config (no servers), wall time with a secret in the
environment (the launcher re-executes itself without it) ÷ without one (no re-exec), median
of interleaved runs. Information only: the re-exec is one more interpreter start-up.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from _util import Result, Size, bench_main, median, pair_ratios, sized, spread, state_dir

SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")


def run(size: Size = "full") -> list[Result]:
    with state_dir() as root:
        config = root / "cfg"
        (config / "agents").mkdir(parents=True)
        (config / "mcp.json").write_text('{"mcpServers": {}}')
        plain = {
            k: v for k, v in os.environ.items() if not any(w in k.upper() for w in SECRET_WORDS)
        }
        plain["SUBAGENT_HOME"] = str(root / "home")
        secret = {**plain, "OPENAI_API_KEY": "sk-bench-0123456789abcdef"}
        cmd = [sys.executable, "-m", "launcher.cli", "tools", "--config-dir", str(config), "--json"]
        times: dict[str, list[float]] = {"plain": [], "secret": []}
        for _ in range(sized(size, 11, 3, 1)):
            for name, env in (("plain", plain), ("secret", secret)):
                start = time.perf_counter()
                subprocess.run(cmd, env=env, check=True, capture_output=True, cwd=root)
                times[name].append(time.perf_counter() - start)
    ratio = median(pair_ratios(times["secret"], times["plain"]))
    detail = f"with secret {spread(times['secret'])}; without {spread(times['plain'])}"
    metric = "tools: re-exec ÷ none (per-pair ratios)"
    return [Result("secret_reexec", metric, ratio, None, detail)]


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
