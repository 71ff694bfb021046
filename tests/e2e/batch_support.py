"""Helpers for `subagent batch` tests: a tasks file of scripted runs, and reading results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Subagent, parse_events, processes_mentioning


def scripted_tasks(root: Path, count: int, *, sleep: float, fail: set[int] = frozenset()) -> Path:
    """TASKS.jsonl of `count` scripted runs that think `sleep` s; ids in `fail` cannot start."""
    script = root / "think.yaml"
    script.write_text(f"steps:\n  - sleep: {sleep}\n    say: answer\n")
    lines = []
    for i in range(count):
        model = f"scripted:{root / 'missing.yaml'}" if i in fail else f"scripted:{script}"
        lines.append(json.dumps({"id": f"t{i}", "prompt": f"task {i}", "model": model}))
    tasks = root / "tasks.jsonl"
    tasks.write_text("\n".join(lines) + "\n")
    return tasks


def results(path: Path) -> list[dict[str, Any]]:
    return parse_events(path.read_text())


def session_spans(subagent: Subagent) -> list[tuple[float, float]]:
    """(session_start ts, session_end ts) of every session the batch's workers recorded."""
    spans = []
    for session in subagent.sessions():
        events = subagent.events(session)
        ts = {e["type"]: e["ts"] for e in events}
        spans.append((ts["session_start"], ts["session_end"]))
    return spans


def most_at_once(spans: list[tuple[float, float]]) -> int:
    """The largest number of spans open at one instant."""
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running = peak = 0
    for _, step in edges:
        running += step
        peak = max(peak, running)
    return peak


def workers(root: Path) -> list[int]:
    """This test's live sub-agent workers (their SUBAGENT_HOME is under `root`)."""
    found = []
    for pid in processes_mentioning(str(root)):
        try:
            if b"launcher.backend.worker" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue  # it ended meanwhile
    return found
