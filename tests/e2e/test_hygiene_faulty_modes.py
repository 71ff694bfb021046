"""Every `faulty` mode in one session: each failure is reported, the session goes on, and
when it ends no server, grandchild or helper process is left."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Subagent, assert_all_gone, read_pid, stub, write_config

pytestmark = pytest.mark.e2e

HUGE = 200_000
CAP = 64 * 1024

SCRIPT = """
steps:
  - call:
      - {tool: broken__ok, args: {}}
      - {tool: broken__fail, args: {}}
      - {tool: broken__fail_result, args: {}}
      - {tool: broken__huge, args: {}}
      - {tool: broken__hang, args: {}}
      - {tool: broken__bad_schema, args: {}}
      - {tool: stubborn__ok, args: {}}
  - call: [{tool: broken__crash, args: {}}]
  - sleep: 1.0
    call: [{tool: broken__ok, args: {}}, {tool: stubborn__ok, args: {}}]
  - say: done
"""


def _servers(tmp_path: Path) -> dict[str, Any]:
    broken = stub(
        "faulty",
        *("--crash-on-call", "--hang-on-call", "--junk-stdout", "--error-call"),
        *("--huge-result", str(HUGE), "--invalid-schema"),
        *("--grandchild", str(tmp_path / "broken.gc"), "--pidfile", str(tmp_path / "broken.pid")),
        tool_timeout=1,
    )
    dead = stub("faulty", "--crash-at-start", "--pidfile", str(tmp_path / "dead.pid"))
    stubborn = stub(
        "faulty",
        "--ignore-sigterm",
        *("--grandchild", str(tmp_path / "stubborn.gc")),
        *("--pidfile", str(tmp_path / "stubborn.pid")),
    )
    return {"broken": broken, "dead": dead, "stubborn": stubborn}


def _results(events: list[dict[str, Any]]) -> dict[tuple[int, str], dict[str, Any]]:
    return {(e["turn"], e["name"]): e for e in events if e["type"] == "tool_result"}


def _states(events: list[dict[str, Any]], server: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "server_state" and e["server"] == server]


def test_every_faulty_mode_is_reported_and_leaves_no_process(
    tmp_path: Path, subagent: Subagent
) -> None:
    config = write_config(tmp_path / "cfg", _servers(tmp_path))
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)

    run = subagent.run(
        "spawn", "--json", "--config-dir", str(config), "--model", f"scripted:{script}", "go"
    )

    assert run.code == 0, run.stderr
    events = run.json_lines()
    assert events == subagent.events()  # --json is the event stream, as recorded
    assert events[0]["type"] == "session_start"
    assert events[-1] == {**events[-1], "type": "session_end", "error": None}
    results = _results(events)

    def result(turn: int, name: str) -> tuple[bool, str]:
        return results[turn, name]["is_error"], results[turn, name]["content"]

    # Calls that work, and every way a call can fail, as results the model can read.
    assert result(1, "broken__ok") == (False, "ok")
    assert result(1, "stubborn__ok") == (False, "ok")
    assert result(1, "broken__fail") == (
        True,
        "Server 'broken' returned an error for 'fail' (code -32000): "
        "fail: this tool always answers with a JSON-RPC error",
    )
    assert result(1, "broken__fail_result") == (
        True,
        "fail_result: this tool always reports an error",
    )
    is_error, huge = result(1, "broken__huge")
    assert not is_error
    head, note = huge.split("\n[result cut: ")
    assert len(huge.encode()) <= CAP and set(head) == {"x"}
    assert note.startswith(f"{HUGE} bytes, over this server's max_result_bytes ({CAP})")
    (saved,) = (subagent.home / "sessions").glob("*/results/call_1_*.txt")
    assert saved.read_text() == "x" * HUGE
    assert result(1, "broken__hang") == (
        True,
        "Tool 'hang' on server 'broken' timed out after 1 s (the request was cancelled).",
    )
    # A tool with an invalid input schema is never offered, so calling it is vetoed.
    turn1 = next(e for e in events if e["type"] == "turn_start")
    assert "broken__bad_schema" not in turn1["tools"]
    assert "broken__ok" in turn1["tools"]
    assert result(1, "broken__bad_schema")[0] is True

    # Crash at start: failed with its reason and stderr, and the session went on.
    (dead_failed,) = [e for e in _states(events, "dead") if e["state"] == "failed"]
    assert "exit status 3" in dead_failed["error"]
    assert "crashing at start as asked" in dead_failed["error"]
    assert dead_failed["log"] in dead_failed["error"]

    # Crash mid-call: that call fails, the server is marked failed with its stderr tail,
    # its tools leave the registry, later calls fail, other servers keep working.
    assert result(2, "broken__crash") == (
        True,
        "Server 'broken' is not reachable (it crashed or closed the connection).",
    )
    (broken_failed,) = [e for e in _states(events, "broken") if e["state"] == "failed"]
    assert broken_failed["error"].startswith("server exited unexpectedly (exit status 4)")
    assert "faulty: crashing mid-call" in broken_failed["error"]
    assert "[subagent]" not in broken_failed["error"]  # the launcher's notes are not stderr
    assert Path(broken_failed["log"]).parent == Path(dead_failed["log"]).parent
    removed = [e for e in events if e["type"] == "tools_changed" and e["removed"]]
    # The muted bad_schema tool was registered too, so it leaves with the others.
    offered_or_muted = set(turn1["tools"]) | {"broken__bad_schema"}
    assert {n for e in removed for n in e["removed"]} == offered_or_muted - {
        "read",
        "write",
        "edit",
        "bash",
        "grep",
        "find",
        "ls",
        "stubborn__ok",
    }
    assert result(3, "broken__ok")[0] is True
    assert result(3, "stubborn__ok") == (False, "ok")
    turn4 = [e for e in events if e["type"] == "turn_start"][3]
    assert [n for n in turn4["tools"] if "__" in n] == ["stubborn__ok"]
    assert [e["state"] for e in _states(events, "stubborn")] == ["starting", "connected", "closed"]

    # The junk line went to the server's log, not to the user.
    log = Path(broken_failed["log"]).read_text()
    assert "protocol error from server" in log
    assert "not JSON-RPC" not in run.stderr

    # Nothing is left: servers, grandchildren (one of them ignores SIGTERM and EOF), watchdog.
    pids = [read_pid(tmp_path / n) for n in ("broken.pid", "dead.pid", "stubborn.pid")]
    pids += [read_pid(tmp_path / n) for n in ("broken.gc", "stubborn.gc")]
    assert_all_gone(pids, tmp_path)
