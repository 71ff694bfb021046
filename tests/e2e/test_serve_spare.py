"""Serve's spare worker: started ahead of the next spawn, it lives only while serve does,
starts no MCP server before its job, and runs a job exactly as a freshly started worker.

Spares are found from outside, as `ps` would: serve's children named `subagent-spare`.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from launcher.backend.pool import SubAgent, drive_worker
from launcher.backend.protocol import Job
from launcher.backend.spare import SparePool
from tests.e2e.conftest import assert_all_gone, is_alive, wait_until
from tests.e2e.spare_support import (
    group_members,
    is_spare,
    process_name,
    serve_pid,
    spares_of,
)
from tests.e2e.spawn_support import stub, write_config

pytestmark = pytest.mark.e2e

LIMIT_S = 90.0
"""Bounds each test; serve, a spare and a stub each pay their imports on 2 cores."""
UP_LIMIT_S = 60.0
"""How long a spare may take to be started and done importing, on a loaded machine."""
GONE_S = 10.0
"""How long a spare may take to go once serve has ended (it has no session to close)."""
QUICK = "steps:\n  - call: [{tool: lazy__echo, args: {text: hi}}]\n  - say: done quick\n"
VOLATILE = frozenset({"ts", "session_id", "duration_s", "elapsed_s", "timeout_s", "pid"})
"""Event fields that differ between any two runs of the same job."""


def lazy_config(tmp_path: Path) -> Path:
    args = ["--marker", str(tmp_path / "lazy.started"), "--pidfile", str(tmp_path / "lazy.pid")]
    return write_config(tmp_path / "cfg", {"lazy": stub("lazy", *args)})


def start_serve(tmp_path: Path, config: Path, **extra: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state"), **extra}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    return subprocess.Popen(
        [sys.executable, "-m", "launcher.cli", "serve", "--config-dir", str(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=tmp_path,
        start_new_session=True,
    )


def process_state(pid: int) -> str | None:
    """/proc/PID/stat's state letter ("T": stopped), or None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def one_ready_spare(parent: int) -> int:
    assert wait_until(lambda: len(spares_of(parent, ready=True)) == 1, UP_LIMIT_S)
    (pid,) = spares_of(parent, ready=True)
    return pid


@pytest.mark.parametrize("stopped", [False, True], ids=["running", "stopped"])
@pytest.mark.parametrize("ending", ["stdin EOF", "SIGTERM", "SIGINT", "SIGKILL"])
def test_a_spare_lives_only_while_serve_does(tmp_path: Path, ending: str, stopped: bool) -> None:
    """`stopped`: a SIGSTOPped spare never reads the EOF its end waits for; it goes anyway."""
    serve = start_serve(tmp_path, lazy_config(tmp_path))
    assert serve.stdin is not None
    try:
        spare = one_ready_spare(serve.pid)
        assert is_alive(spare)
        if stopped:
            os.kill(spare, signal.SIGSTOP)
            assert wait_until(lambda: process_state(spare) == "T", GONE_S)
        if ending == "stdin EOF":
            serve.stdin.close()
        else:
            serve.send_signal(getattr(signal, ending))
        if ending == "SIGINT":
            # serve ends on SIGINT only once its host hangs up (its stdin reader cannot be
            # cancelled); after SIGTERM and SIGKILL the spare is checked before that.
            serve.stdin.close()
        assert wait_until(lambda: not is_alive(spare), GONE_S)
        # Nothing it might have started is left in its process group.
        assert wait_until(lambda: group_members(spare) == [], GONE_S)
        if not serve.stdin.closed:
            serve.stdin.close()
        serve.wait(timeout=LIMIT_S)
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()
    assert_all_gone([spare], tmp_path)
    assert not (tmp_path / "lazy.started").exists()


def test_a_waiting_spare_holds_no_secret_in_its_environment_block(tmp_path: Path) -> None:
    key = f"sk-test-SECRET-{secrets.token_hex(8)}"
    serve = start_serve(tmp_path, lazy_config(tmp_path), OPENAI_API_KEY=key)
    try:
        spare = one_ready_spare(serve.pid)
        try:
            block = Path(f"/proc/{spare}/environ").read_bytes()
        except PermissionError:
            # Not root: the spare is non-dumpable, so no process of the user reads it.
            assert os.geteuid() != 0
        else:
            assert b"SUBAGENT_HOME=" in block  # the block was read, and it is the spare's
            assert key.encode() not in block
    finally:
        serve.kill()
        serve.wait()
    assert wait_until(lambda: not is_alive(spare), GONE_S)


@pytest.mark.anyio
async def test_a_spare_starts_no_server_until_its_spawn_and_is_replaced(tmp_path: Path) -> None:
    config = lazy_config(tmp_path)
    (tmp_path / "quick.yaml").write_text(QUICK)
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state")}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher.cli", "serve", "--config-dir", str(config)],
        env=env,
        cwd=str(tmp_path),
    )
    marker, pidfile = tmp_path / "lazy.started", tmp_path / "lazy.pid"
    with anyio.fail_after(LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S) as c:
            parent = serve_pid(config)
            assert parent is not None
            first = one_ready_spare(parent)
            # Imported, waiting for a job: no server started.
            assert not marker.exists() and not pidfile.exists()

            result = await c.call_tool(
                "spawn_subagent",
                {"prompt": "go", "ext": ["lazy"], "model": f"scripted:{tmp_path / 'quick.yaml'}"},
            )
            assert not result.is_error, result
            assert result.content[0].text == "done quick"
            # The spawn took the spare (it is no spare now), which started the server.
            assert not is_spare(first)
            assert marker.exists()
            assert_all_gone([int(pidfile.read_text())], tmp_path / "nothing")

            marker.unlink()
            pidfile.unlink()
            second = one_ready_spare(parent)
            assert second != first
            assert not marker.exists() and not pidfile.exists()
    assert_all_gone([first, second], tmp_path)


def _normal(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events without what differs between any two runs (times, the session's id)."""
    ids = [str(e["session_id"]) for e in events if e.get("session_id")]

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in VOLATILE}
        if isinstance(value, list):
            return [strip(v) for v in value]
        if isinstance(value, str):
            for session_id in ids:
                value = value.replace(session_id, "SESSION")
        return value

    return [strip(e) for e in events]


async def _run(job: Job, log_path: Path, pool: SparePool | None) -> tuple[SubAgent, list[Any]]:
    entry = SubAgent(id=log_path.stem, agent=job.agent, status="running")
    events: list[dict[str, Any]] = []
    entry.watchers.append(events.append)
    await drive_worker(entry, job, log_path=log_path, spares=pool)
    return entry, events


@pytest.mark.anyio
async def test_a_job_run_by_a_spare_matches_one_run_by_a_fresh_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUBAGENT_HOME", str(tmp_path / "state"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "quick.yaml").write_text(QUICK)
    job = Job(
        prompt="go",
        ext=["lazy"],
        model=f"scripted:{tmp_path / 'quick.yaml'}",
        config_dir=str(lazy_config(tmp_path)),
        workspace=str(workspace),
    )
    logs = tmp_path / "state" / "logs"
    with anyio.fail_after(LIMIT_S):
        cold, cold_events = await _run(job, logs / "cold.log", None)
        async with anyio.create_task_group() as tg:
            pool = SparePool(workspace=workspace, log_dir=logs)
            await tg.start(pool.run)
            assert pool.pids
            (spare,) = pool.pids
            assert wait_until(lambda: process_name(spare) == "subagent-spare", UP_LIMIT_S)
            warm, warm_events = await _run(job, logs / "warm.log", pool)
            assert warm.process is not None and warm.process.pid == spare
            replacement = pool.pids
            tg.cancel_scope.cancel()
    assert (cold.status, cold.result, cold.turns) == ("completed", "done quick", 2)
    assert (warm.status, warm.result, warm.turns) == (cold.status, cold.result, cold.turns)
    assert [e["type"] for e in warm_events] == [e["type"] for e in cold_events]
    assert _normal(warm_events) == _normal(cold_events), json.dumps(warm_events, indent=1)
    # The spare's stderr became the sub-agent's log, and the pool left no process.
    assert (logs / "warm.log").exists()
    assert list(logs.glob("spare-*.log")) == []
    assert replacement and replacement != [spare]
    assert_all_gone([spare, *replacement], tmp_path)
