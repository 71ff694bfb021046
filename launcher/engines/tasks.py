"""TASKS.jsonl in, RESULTS.jsonl out: parsing lines, and what a re-run may skip.

Input lines are read lazily (a batch of 10 000 prompts is never held at once); a bad
line is reported with its number and not run. Results are appended one line per task
as it ends, so a crash loses only the tasks in flight.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from launcher.config.types import ISOLATION_MODES
from launcher.engines.base import BatchTask
from launcher.events import RunStatus

LIMIT_FIELDS = ("max_tokens", "max_cost_usd", "timeout", "idle_timeout")
FIELDS = frozenset(
    {"id", "prompt", "agent", "ext", "model", "workspace", "isolation", *LIMIT_FIELDS}
)


@dataclass(frozen=True)
class BadLine:
    """An input line that is not a task, with why."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


def parse_task(text: str, line: int) -> BatchTask | BadLine:
    """One input line as a BatchTask, or why it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return BadLine(line, f"not JSON ({exc.msg})")
    except ValueError as exc:  # e.g. a lone surrogate that is not UTF-8
        return BadLine(line, f"not JSON ({exc})")
    if not isinstance(data, dict):
        return BadLine(line, "not a JSON object")
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        return BadLine(line, f"unknown field '{unknown[0]}'")
    task_id, prompt = data.get("id"), data.get("prompt")
    if not isinstance(task_id, str | int) or isinstance(task_id, bool) or str(task_id) == "":
        return BadLine(line, "field 'id' must be a non-empty string")
    if not isinstance(prompt, str) or not prompt.strip():
        return BadLine(line, "field 'prompt' must be a non-empty string")
    ext = data.get("ext", [])
    if isinstance(ext, str):
        ext = [ext]
    if not isinstance(ext, list) or not all(isinstance(e, str) for e in ext):
        return BadLine(line, "field 'ext' must be a list of server names")
    for key in ("agent", "model", "workspace"):
        if data.get(key) is not None and not isinstance(data[key], str):
            return BadLine(line, f"field '{key}' must be a string")
    isolation = data.get("isolation")
    if isolation is not None and isolation not in ISOLATION_MODES:
        return BadLine(
            line, f"field 'isolation' must be {' or '.join(ISOLATION_MODES)}, got {isolation!r}"
        )
    for key in LIMIT_FIELDS:
        value = data.get(key)
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 < value < math.inf  # NaN and inf: JSON parsers take both
        ):
            return BadLine(line, f"field '{key}' must be a positive finite number")
    if data.get("max_tokens") is not None and not isinstance(data["max_tokens"], int):
        return BadLine(line, "field 'max_tokens' must be a whole number")
    return BatchTask(
        limits={k: data[k] for k in LIMIT_FIELDS if data.get(k) is not None},
        id=str(task_id),
        prompt=prompt,
        line=line,
        agent=data.get("agent") or "general-purpose",
        ext=tuple(ext),
        model=data.get("model"),
        workspace=data.get("workspace"),
        isolation=isolation,
    )


def read_tasks(path: Path) -> Iterator[BatchTask | BadLine]:
    """Every non-blank line of `path`, parsed; a repeated id is a bad line."""
    seen: set[str] = set()
    with path.open(encoding="utf-8", errors="replace") as f:
        for number, text in enumerate(f, start=1):
            if not text.strip():
                continue
            parsed = parse_task(text, number)
            if isinstance(parsed, BatchTask):
                if parsed.id in seen:
                    parsed = BadLine(number, f"id '{parsed.id}' repeats an earlier line")
                else:
                    seen.add(parsed.id)
            yield parsed


class Recorded(NamedTuple):
    """What a results file says of one task: its status and, for a failure, the error."""

    status: RunStatus
    error: str | None = None


def finished(results: Path) -> dict[str, Recorded]:
    """id -> what a results file already holds for it (the last line wins)."""
    out: dict[str, Recorded] = {}
    if not results.exists():
        return out
    with results.open(encoding="utf-8", errors="replace") as f:
        for text in f:
            try:
                row: Any = json.loads(text)
            except ValueError:
                continue  # a line cut short by a crash: that task runs again
            if isinstance(row, dict) and isinstance(row.get("id"), str):
                error = row.get("error")
                out[row["id"]] = Recorded(
                    RunStatus.of(row.get("status")), error if isinstance(error, str) else None
                )
    return out


def drop_results(results: Path, ids: set[str]) -> None:
    """Rewrite `results` without the lines of `ids` (atomically), so a re-run of those
    tasks leaves exactly one line each."""
    if not ids or not results.exists():
        return
    fd, tmp = tempfile.mkstemp(dir=results.parent, prefix=".results-")
    with os.fdopen(fd, "w", encoding="utf-8") as out, results.open(encoding="utf-8") as f:
        for text in f:
            try:
                row = json.loads(text)
            except ValueError:
                continue
            if isinstance(row, dict) and row.get("id") not in ids:
                out.write(text if text.endswith("\n") else text + "\n")
    os.replace(tmp, results)
