"""A plain `spawn_subagent` the host sends before serve's MCP SDK has loaded runs at once.

The early face takes it (backend/first_call.py), the pool runs it in a worker, and its
answer is written in the SDK server's form; the run is the pool's like any other (seen by
`get_subagent_result`, cancelled by `notifications/cancelled`, drained by SIGTERM).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import cli_argv, cli_env, wait_until, write_config
from tests.e2e.test_serve_drain import DRAIN_LIMIT_S, START_LIMIT_S, statuses
from tests.e2e.test_serve_early import LIMIT_S, Host, request, spawn_call

pytestmark = pytest.mark.e2e

INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "host", "version": "1"},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
HELPER = "---\nname: helper\ndescription: Helps.\nmodel: scripted:../done.yaml\n---\nHelp.\n"
SLOW = "---\nname: slow\ndescription: Waits.\nmodel: scripted:../long.yaml\n---\nWait.\n"
VARYING = ("agent_id", "session_id", "usage")
"""What differs between two runs of one agent."""


def _config(tmp_path: Path) -> Path:
    config = write_config(tmp_path / "cfg", {}, {"helper": HELPER, "slow": SLOW})
    (config / "done.yaml").write_text("steps:\n  - say: done\n")
    (config / "long.yaml").write_text("steps:\n  - sleep: 600\n    say: never\n")
    return config


def _same_form(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer with what differs from run to run taken out, its key order kept."""
    result = answer["result"]
    structured = result.get("structuredContent") or {}
    content = result["content"]
    if "agent_id" in content[0]["text"]:  # a background call's answer names its run
        content = [{**content[0], "text": json.dumps(sorted(json.loads(content[0]["text"])))}]
    return {
        "keys": list(answer),
        "result_keys": list(result),
        "structured_keys": list(structured),
        "content": content,
        "structured": {k: v for k, v in structured.items() if k not in VARYING},
    }


@pytest.mark.parametrize(
    "arguments",
    [
        {"prompt": "go", "agent": "helper"},
        {"prompt": "go", "agent": "helper", "background": True},
        {"prompt": "go", "resume": "nothing-like-it"},
    ],
    ids=["foreground", "background", "refused"],
)
def test_a_first_spawn_is_answered_in_the_sdk_servers_form_and_stays_the_pools(
    tmp_path: Path, arguments: dict[str, Any]
) -> None:
    host = Host(tmp_path, _config(tmp_path))
    try:
        host.send(request(1, "initialize", INIT), INITIALIZED, spawn_call(2, **arguments))
        assert host.next()["id"] == 1
        first = host.next()
        assert first["id"] == 2
        # `_meta` makes the same call the SDK server's (first_call.py takes only plain ones).
        second_call = spawn_call(3, **arguments)
        second_call["params"]["_meta"] = {}
        host.send(second_call)
        second = host.next()
        assert second["id"] == 3
        assert _same_form(first) == _same_form(second)
        if "resume" in arguments:
            assert first["result"]["isError"] is True
            return
        agent_id = first["result"]["structuredContent"]["agent_id"]
        assert agent_id != second["result"]["structuredContent"]["agent_id"]
        get = {"name": "get_subagent_result", "arguments": {"agent_id": agent_id, "wait": True}}
        host.send(request(4, "tools/call", get))
        looked_up = host.next()
        assert looked_up["result"]["structuredContent"]["status"] == "completed"
        assert looked_up["result"]["content"][0]["text"] == "done"
    finally:
        host.close()
    assert host.answers.empty(), "nothing may be answered twice"


RUN_WITHOUT_SDK = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    import anyio
    from launcher.backend.first_call import FirstCalls
    from launcher.backend.pool import SubagentManager
    from launcher.backend.spawning import Spawner
    from launcher.config.discovery import load_config

    config_dir, workspace = Path(sys.argv[1]), Path(sys.argv[2])
    written = []

    async def main():
        calls = FirstCalls(written.append)
        init = {"params": {"capabilities": {}}}
        arguments = {"prompt": "go", "agent": "helper"}
        params = {"name": "spawn_subagent", "arguments": arguments}
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
        taken = calls.offer(call, init)
        config = load_config(config_dir, cwd=workspace)
        async with anyio.create_task_group() as tg:
            manager = SubagentManager(tg, config_dir=config_dir, workspace=workspace,
                state_home=workspace / "state", default_model=None, max_concurrent=1)
            spawner = Spawner(manager, config, config_dir, workspace)
            tg.start_soon(calls.serve, spawner.start, manager.stop)
            with anyio.fail_after(float(sys.argv[3])):
                while not written:
                    await anyio.sleep(0.05)
            tg.cancel_scope.cancel()
        sdk = sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types"))
        print(json.dumps({"taken": taken, "answer": json.loads(written[0]), "sdk": sdk}))

    anyio.run(main)
    """
)


def test_the_first_call_runs_and_is_answered_without_the_sdk(tmp_path: Path) -> None:
    config = _config(tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", RUN_WITHOUT_SDK, str(config), str(tmp_path), str(LIMIT_S)],
        capture_output=True,
        text=True,
        timeout=LIMIT_S + 30,
        env=cli_env(tmp_path / "state"),
        cwd=tmp_path,
        check=True,
    )
    got = json.loads(out.stdout)
    assert got["taken"] is True
    assert got["answer"]["id"] == 7
    assert got["answer"]["result"]["content"] == [{"type": "text", "text": "done"}]
    assert got["answer"]["result"]["structuredContent"]["status"] == "completed"
    assert got["sdk"] == [], "the first call's path must not load the MCP SDK"


@pytest.mark.parametrize(
    "call",
    [
        {"name": "spawn_subagent", "arguments": {"prompt": "go"}, "_meta": {"progressToken": 1}},
        {"name": "spawn_subagent", "arguments": {"prompt": "go"}, "task": {}},
        {"name": "spawn_subagent", "arguments": {"prompt": "go", "max_turns": 0}},
        {"name": "spawn_subagent", "arguments": {"prompt": "\ud800"}},
        {"name": "list_agents", "arguments": {}},
    ],
)
def test_a_call_that_needs_the_sdk_is_left_to_it(call: dict[str, Any]) -> None:
    from launcher.backend.first_call import FirstCalls

    calls = FirstCalls(lambda data: None)
    assert not calls.offer(request(5, "tools/call", call), {"params": {"capabilities": {}}})


def test_a_host_that_can_be_asked_is_left_to_the_sdk() -> None:
    from launcher.backend.first_call import FirstCalls

    calls = FirstCalls(lambda data: None)
    call = spawn_call(5, prompt="go")
    assert calls.offer(call, {"params": {"capabilities": {}}})
    assert not calls.offer(call, {"params": {"capabilities": {"elicitation": {}}}})


def test_a_cancelled_first_call_is_stopped_and_never_answered(tmp_path: Path) -> None:
    host = Host(tmp_path, _config(tmp_path))
    home = tmp_path / "state"
    try:
        host.send(
            request(1, "initialize", INIT), INITIALIZED, spawn_call(2, prompt="go", agent="slow")
        )
        assert host.next()["id"] == 1
        assert wait_until(lambda: statuses(home) == ["running"], START_LIMIT_S)
        host.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
        )
        assert wait_until(lambda: statuses(home) == ["stopped"], START_LIMIT_S)
        host.send(request(3, "tools/call", {"name": "list_agents", "arguments": {}}))
        assert host.next()["id"] == 3, "the cancelled call must get no answer"
    finally:
        host.close()
    assert host.answers.empty(), "nothing may be answered twice"


def test_a_call_reusing_a_cancelled_calls_id_is_run_and_answered(tmp_path: Path) -> None:
    # The SDK's path answers such a call; a cancellation covers only the calls before it.
    host = Host(tmp_path, _config(tmp_path))
    home = tmp_path / "state"
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
    try:
        host.send(
            request(1, "initialize", INIT),
            INITIALIZED,
            spawn_call(2, prompt="go", agent="slow"),
            cancel,
            spawn_call(2, prompt="go", agent="helper"),
        )
        assert host.next()["id"] == 1
        again = host.next()
        assert again["id"] == 2 and again["result"]["structuredContent"]["status"] == "completed"
        assert wait_until(lambda: "completed" in statuses(home), LIMIT_S), statuses(home)
        # The slow run was stopped (or never got as far as recording a session).
        assert sorted(statuses(home)) in (["completed"], ["completed", "stopped"])
        host.send(request(3, "tools/call", {"name": "list_agents", "arguments": {}}))
        assert host.next()["id"] == 3, "the cancelled call must get no answer"
    finally:
        host.close()
    assert host.answers.empty(), "nothing may be answered twice"


def test_sigterm_drains_a_first_call_still_running(tmp_path: Path) -> None:
    config = _config(tmp_path)
    home = tmp_path / "state"
    proc = subprocess.Popen(
        cli_argv("serve", "--config-dir", str(config)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "serve.err").open("wb"),
        env=cli_env(home),
        cwd=tmp_path,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        lines = [
            request(1, "initialize", INIT),
            INITIALIZED,
            spawn_call(2, prompt="go", agent="slow"),
            request(3, "tools/call", {"name": "list_agents", "arguments": {}}),
        ]
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
        proc.stdin.flush()
        seen: list[Any] = []
        while 3 not in seen:  # list_agents is the SDK's: once answered, the drain is armed
            line = proc.stdout.readline()
            assert line, "serve closed stdout"
            seen.append(json.loads(line).get("id"))
        assert 2 not in seen
        assert wait_until(lambda: statuses(home) == ["running"], START_LIMIT_S)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(DRAIN_LIMIT_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert statuses(home) == ["stopped"]
    assert wait_until(lambda: not _working_in(tmp_path), DRAIN_LIMIT_S), _working_in(tmp_path)


def test_sigterm_before_the_sdk_has_loaded_drains_the_first_calls(tmp_path: Path) -> None:
    # The early window: a first call's worker is up, serve has not yet imported the SDK
    # (and with it runtime.py's drain). SIGTERM then still stops and records the run and
    # exits 0, not killed by the signal.
    config = _config(tmp_path)
    home = tmp_path / "state"
    proc = subprocess.Popen(
        cli_argv("serve", "--config-dir", str(config)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "serve.err").open("wb"),
        env=cli_env(home),
        cwd=tmp_path,
        start_new_session=True,
    )
    assert proc.stdin is not None
    try:
        lines = [
            request(1, "initialize", INIT),
            INITIALIZED,
            spawn_call(2, prompt="go", agent="slow"),
        ]
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
        proc.stdin.flush()
        assert wait_until(lambda: statuses(home) == ["running"], START_LIMIT_S)
        proc.send_signal(signal.SIGTERM)  # serve's SDK import takes ~1 s more from here
        assert proc.wait(DRAIN_LIMIT_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert statuses(home) == ["stopped"]
    assert wait_until(lambda: not _working_in(tmp_path), DRAIN_LIMIT_S), _working_in(tmp_path)


def _working_in(directory: Path) -> list[int]:
    """Pids of processes whose working directory is `directory` (serve's workers, spares)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cwd").resolve() == directory.resolve():
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def test_the_sdk_does_not_wait_for_first_calls_beyond_the_pools_slots() -> None:
    from launcher.backend.first_call import FirstCalls
    from launcher.backend.pool import SubAgent

    calls = FirstCalls(lambda data: None)
    calls.slots = 1
    started, queued = SubAgent(id="sa-1", agent="helper"), SubAgent(id="sa-2", agent="helper")
    calls._entries += [started, queued]
    assert not calls.launched()  # the one with a slot has no worker yet
    started.process = object()  # type: ignore[assignment]
    assert calls.launched(), "a call waiting for a slot must not hold the SDK's import"
