"""Benchmark: grep in RE2 (linear time, issue 23 item 1) against Python's `re` line by line.

The same `grep_files` over the same tree (200 files × 2 000 lines, ~16 MB), once with its
RE2 engine (one search per file plus one per matching line) and once with a `re` engine
injected through `compile_pattern` that searches every line, as grep did before; median
of interleaved runs. A pattern that matches nowhere, one that matches every line (grep
stops at 500 matches), and `(a+)+$`, which `re` cannot finish on a line of forty `a`s
and a `!` (so RE2 only, against its own plain search).
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _util import Result, Size, bench_main, median, pair_ratios, sized, spread

from launcher.tools.search import grep_files
from launcher.tools.workspace import Workspace

FILES, LINES = 200, 2000
CAP = 1 << 20


class _ReLines:
    """grep's engine before: `re`, one search per line."""

    def __init__(self, pattern: str, ignore_case: bool = False) -> None:
        self._regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)

    def lines(self, blob: bytes) -> Iterator[tuple[int, int, int]]:
        start = 0
        for number, line in enumerate(blob.split(b"\n"), start=1):
            if self._regex.search(line.decode()) is not None:
                yield number, start, start + len(line)
            start += len(line) + 1


def _time(ws: Workspace, pattern: str, engine: Any = None) -> float:
    args = {"pattern": pattern}
    extra = {"compile_pattern": engine} if engine is not None else {}
    start = time.perf_counter()
    grep_files(ws, args, CAP, **extra)
    return time.perf_counter() - start


def run(size: Size = "full") -> list[Result]:
    results = []
    runs = sized(size, 5, 2, 1)
    files, lines = sized(size, (FILES, LINES), (FILES, LINES), (10, 200))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        body = "".join(
            f"line {i} of some ordinary source text = value({i})\n" for i in range(lines)
        )
        for i in range(files):
            (root / f"f{i}.txt").write_text(body + ("a" * 40 + "!\n" if i == 0 else ""))
        ws = Workspace(root)
        for name, pattern in (("nowhere", r"no\s+such\s+word"), ("every line", r"value\(\d+\)")):
            times: dict[str, list[float]] = {"re2": [], "re": []}
            for _ in range(runs):
                times["re2"].append(_time(ws, pattern))
                times["re"].append(_time(ws, pattern, _ReLines))
            ratio = median(pair_ratios(times["re2"], times["re"]))
            detail = f"re2 {spread(times['re2'])}; re {spread(times['re'])}"
            results.append(Result("grep_engine", f"{name}: RE2 ÷ re", ratio, None, detail))
        nested, plain = [], []
        for _ in range(runs):  # alternating: a pair shares the machine's load
            nested.append(_time(ws, r"(a+)+$"))
            plain.append(_time(ws, r"a+$"))
        detail = f"(a+)+$ {spread(nested)}; a+$ {spread(plain)}; re: does not finish"
        ratio = median(pair_ratios(nested, plain))
        results.append(Result("grep_engine", "(a+)+$ ÷ a+$ (RE2)", ratio, 1.5, detail))
    return results


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
