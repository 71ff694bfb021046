"""Helpers for `subagent batch` tests: a tasks file of scripted runs, and reading results."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Subagent, parse_events, processes_mentioning


def scripted_tasks(
    root: Path, count: int, *, sleep: float, fail: set[int] = frozenset(), barrier: int = 0
) -> Path:
    """TASKS.jsonl of `count` scripted runs that think `sleep` s; ids in `fail` cannot start.

    `barrier`: each run first waits (a bash call in its workspace) until `barrier` runs
    have started, so that many sessions are open at once by construction.
    """
    script = root / "think.yaml"
    steps: list[dict[str, Any]] = []
    if barrier:
        wait = (
            "mkdir -p started && mktemp -p started run.XXXXXX >/dev/null && "
            f"for i in $(seq 900); do [ $(ls started | wc -l) -ge {barrier} ] && exit 0; "
            "sleep 0.1; done; exit 1"
        )
        steps.append({"call": [{"tool": "bash", "args": {"command": wait}}]})
    steps.append({"sleep": sleep, "say": "answer"})
    script.write_text(json.dumps({"steps": steps}))  # JSON is YAML
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


def need_ray() -> None:
    """Skip without Ray (fail in CI, where setup installs it)."""
    if importlib.util.find_spec("ray") is None:
        reason = "ray is not installed (scripts/setup.sh --interop installs it)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)


def written(path: Path) -> list[dict[str, Any]]:
    """The whole lines of a results file still being written ([] before it exists)."""
    return parse_events(path.read_text(), partial_tail=True) if path.exists() else []


def thinking(subagent: Subagent, prompt: str) -> bool:
    """A session on `prompt` has started turn 1 and not ended: its worker is mid-task."""
    for session in subagent.sessions():
        events = subagent.events(session)
        types = {e.get("type") for e in events}
        asked = any(e.get("type") == "user_message" and e.get("content") == prompt for e in events)
        if asked and "turn_start" in types and "session_end" not in types:
            return True
    return False
