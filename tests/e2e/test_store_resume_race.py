"""Four `spawn --resume` of one session at once: exactly one runs, the others exit 2 as a
second resume of a running session does, and the store keeps every turn of the one."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, write_config

pytestmark = pytest.mark.e2e

RACERS = 4
RACE_LIMIT_S = 90.0
"""Four launchers starting at once on 2 loaded cores; only bounds a hung run."""
GATE_WAIT = 'for i in $(seq 1800); do [ -e "{gate}" ] && exit 0; sleep 0.05; done; exit 1'
"""The running resume waits (bounded) until the test has seen every other one end."""


def test_concurrent_resumes_of_one_session_run_exactly_one(
    tmp_path: Path, subagent: Subagent
) -> None:
    config = write_config(tmp_path / "cfg", {})
    first = tmp_path / "first.yaml"
    first.write_text("steps:\n  - say: first answer\n")
    gate = tmp_path / "gate"
    again = tmp_path / "again.yaml"
    command = json.dumps(GATE_WAIT.format(gate=gate))
    again.write_text(
        f"steps:\n  - call: [{{tool: bash, args: {{command: {command}}}}}]\n  - say: resumed\n"
    )
    cfg = ("--config-dir", str(config))
    assert subagent.run("spawn", *cfg, "--model", f"scripted:{first}", "go").code == 0
    (stored,) = json.loads(subagent.run("log", "--json").stdout)

    resume = ("--model", f"scripted:{again}", "--resume", stored["id"])
    procs = [subagent.start("spawn", *cfg, *resume, f"n{i}") for i in range(RACERS)]
    try:
        deadline = time.monotonic() + RACE_LIMIT_S
        while sum(p.poll() is not None for p in procs) < RACERS - 1:
            assert time.monotonic() < deadline, "more than one resume is running"
            time.sleep(0.05)
        gate.touch()
        for p in procs:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
    finally:
        gate.touch()
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    outcomes = sorted((p.returncode, p.stderr.read() if p.stderr else "") for p in procs)

    assert [code for code, _ in outcomes] == [0] + [2] * (RACERS - 1), outcomes
    for _, err in outcomes[1:]:
        assert f"session {stored['id']} is still running" in err and "Traceback" not in err
    conv = json.loads(subagent.run("log", stored["id"], "--json").stdout)
    users = [m["content"] for m in conv["messages"] if m["role"] == "user"]
    assert len(users) == 2 and users[0] == "go" and users[1] in {f"n{i}" for i in range(RACERS)}
    assert conv["result"] == "resumed" and conv["turns"] == 3
