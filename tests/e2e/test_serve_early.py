"""serve over a real pipe, with a host that pipelines its first messages before the SDK is up.

The host writes `initialize`, `initialized`, `tools/list`, two `tools/call`s and a `ping` in
one go at start-up, as Claude Code and Codex do; each must be answered once (the early face
answers the first ones, the SDK server the rest), and the `tools/call` must run.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import write_config

pytestmark = pytest.mark.e2e

LIMIT_S = 90.0
"""Bounds each wait; serve and a worker each pay an SDK import on 2 cores."""


class Host:
    """A hand-written MCP host on serve's stdio: raw JSON lines, answers read as they come."""

    def __init__(self, tmp_path: Path, config: Path) -> None:
        env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state")}
        env.pop("SUBAGENT_CONFIG_DIR", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "launcher.cli", "serve", "--config-dir", str(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=(tmp_path / "serve.err").open("w"),
            env=env,
            cwd=tmp_path,
        )
        self.answers: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.answers.put(json.loads(line))

    def send(self, *messages: dict[str, Any]) -> None:
        self.send_raw(b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    def send_raw(self, data: bytes) -> None:
        """Write bytes as they are (lines the host frames itself, valid JSON or not)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def next(self, timeout: float = LIMIT_S) -> dict[str, Any]:
        return self.answers.get(timeout=timeout)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=LIMIT_S)


def request(rid: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        out["params"] = params
    return out


def spawn_call(rid: int, **arguments: Any) -> dict[str, Any]:
    return request(rid, "tools/call", {"name": "spawn_subagent", "arguments": arguments})


def text(answer: dict[str, Any]) -> str:
    return str(answer["result"]["content"][0]["text"])


def test_pipelined_messages_are_each_answered_once_and_a_call_before_the_sdk_runs(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path / "cfg", {})
    (config / "done.yaml").write_text("steps:\n  - say: done early\n")
    host = Host(tmp_path, config)
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "host", "version": "1"},
    }
    try:
        host.send(
            request(1, "initialize", init),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            request(2, "tools/list"),
            request(3, "tools/call", {"name": "list_agents", "arguments": {}}),
            spawn_call(4, prompt="go", model=f"scripted:{config / 'done.yaml'}"),
            request(5, "ping"),
        )
        first = [host.next() for _ in range(3)]
        assert [a["id"] for a in first] == [1, 2, 3]
        assert first[0]["result"]["protocolVersion"] == "2025-06-18"
        assert "tasks" not in first[0]["result"]["capabilities"]  # 2025-06-18 has no Tasks
        tools = {t["name"]: t for t in first[1]["result"]["tools"]}
        assert "execution" not in tools["spawn_subagent"]
        assert "general-purpose" in text(first[2])
        rest = {a["id"]: a for a in (host.next(), host.next())}
        assert sorted(rest) == [4, 5]
        assert text(rest[4]) == "done early"
        assert rest[5]["result"] == {}

        # After the hand-over: the SDK server answers, each request once.
        host.send(
            request(6, "tools/list"),
            spawn_call(7, prompt="go", max_turns=-3),
            spawn_call(8, prompt="go", ext="gh"),
            spawn_call(9, prompt="go", model="scripted:/etc/passwd"),
            request(10, "ping"),
        )
        later = {a["id"]: a for a in (host.next() for _ in range(5))}
        assert sorted(later) == [6, 7, 8, 9, 10]
        assert later[6]["result"]["tools"] == first[1]["result"]["tools"]
        assert "`max_turns` must be at least 1" in text(later[7])
        assert "`ext` must be a list" in text(later[8])
        assert "must be a file inside" in text(later[9])
        assert "root:" not in text(later[9])
        assert all(later[i]["result"]["isError"] for i in (7, 8, 9))
        sessions = list((tmp_path / "state" / "sessions").iterdir())
        assert len(sessions) == 1, "a refused spawn must run nothing"
    finally:
        host.close()
    assert host.answers.empty(), "nothing may be answered twice"
