"""`serve --engine ray --address A`: each sub-agent a Ray task on a running local cluster
(`ray start --head` on loopback, token auth on, one cluster for the module): a foreground
spawn, a task, and a stop that reaches the run on its node; sessions land in the store.
And a worker on the cluster gets what a local worker gets: the token file's deny rule and
no token in its shell's reach, the secrets it masks (serve's tokens, a model key: never
in the clear in anything Ray wrote), the `OTEL_*` variables and the host's trace context."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from launcher.tools.sandbox import mechanism_problem
from tests.e2e.batch_support import need_ray
from tests.e2e.conftest import wait_until
from tests.e2e.otlp_receiver import OtlpReceiver, ancestors, named
from tests.e2e.serve_http_support import (
    LIMIT_S,
    http_client,
    http_serve,
    session_events,
    task_until,
)
from tests.e2e.serve_tasks_support import legacy_task_call, request
from tests.e2e.test_serve import workers
from tests.e2e.test_serve_drain import statuses
from tests.e2e.test_serve_http_guard import ALICE, BOB, MARKER, all_bytes_under, write_tokens
from tests.test_ray_node_sealed_start import GRAB, _log_entries, _taken

pytestmark = pytest.mark.e2e

CLUSTER_LIMIT_S = 120.0
"""`ray start --head` on a loaded 2-core box (about 20 s idle)."""
RAY_LIMIT_S = 240.0
"""A first task on a fresh cluster starts a Ray worker, then ours: slow, once."""
SERVE_TOKEN = "serve-env-token-0123456789abcdef"
"""SUBAGENT_SERVE_TOKEN: caller `default`, beside the token file's alice and bob."""
MODEL_KEY = "sk-ray-model-key-0123456789abcdef"
"""A secret-named variable of serve's, as a model's API key is."""
OTLP_KEY = "otlp-collector-key-0123456789abcdef"
"""A collector's API key, given to the exporter in OTEL_EXPORTER_OTLP_HEADERS."""
PARENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN = "00f067aa0ba902b7"
SPANS_LIMIT_S = 60.0
"""Bounds the wait for serve's and the worker's last spans (each flushes as it ends)."""


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict[str, str]]:
    """A running local Ray cluster: its address and the environment that joins it."""
    need_ray()
    # A short private directory: Ray's socket paths must fit in 107 bytes.
    root = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))
    token = root / "token"
    token.write_text(secrets.token_hex(32))
    token.chmod(0o600)
    env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}
    ray = Path(os.environ.get("VIRTUAL_ENV", Path(os.sys.executable).parent.parent)) / "bin" / "ray"
    out = (root / "start.log").open("wb")
    proc = subprocess.Popen(
        [str(ray), "start", "--head", "--port", "0", "--node-ip-address", "127.0.0.1",
         "--temp-dir", str(root), "--include-dashboard", "false", "--disable-usage-stats",
         "--num-cpus", "2", "--block"],
        stdout=out,
        stderr=subprocess.STDOUT,
        env={**os.environ, **env, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"},
        start_new_session=True,
    )  # fmt: skip
    try:
        ports = root / "session_latest"
        started = lambda: b"Ray runtime started" in (root / "start.log").read_bytes()  # noqa: E731
        assert wait_until(lambda: started() or proc.poll() is not None, CLUSTER_LIMIT_S)
        assert proc.poll() is None, (root / "start.log").read_text()
        (port_file,) = ports.glob("gcs_server_port_*")
        yield {"address": f"127.0.0.1:{port_file.read_text().strip()}", "root": str(root), **env}
    finally:
        proc.send_signal(signal.SIGTERM)  # the head drains and ends every process it started
        try:
            proc.wait(CLUSTER_LIMIT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        out.close()
        shutil.rmtree(root, ignore_errors=True)


def assert_channel_unopenable(worker: int, ray_worker: int) -> None:
    """What another process of this user tries: open the Ray worker's end of its run's
    stdin and stdout through /proc, to slip in a key offer and read the sealed answer."""
    try:
        channel = {os.readlink(f"/proc/{worker}/fd/{fd}") for fd in (0, 1)}
    except PermissionError:
        # Without privilege the (non-dumpable) worker's descriptors cannot even be named.
        assert not os.access(f"/proc/{worker}/fd", os.R_OK)
        return
    held = {entry.path: link_of(entry.path) for entry in os.scandir(f"/proc/{ray_worker}/fd")}
    # A pipe's two ends are one inode, which the Ray worker's descriptor would show too.
    shared = [path for path, link in held.items() if link in channel]
    assert not shared, (channel, shared)
    assert all(link.startswith("socket:") for link in channel), channel
    # And the Ray worker's sockets (its ends among them) open for nobody through /proc.
    for path in [path for path, link in held.items() if link.startswith("socket:")]:
        for flags in (os.O_WRONLY, os.O_RDONLY):
            try:
                os.close(os.open(path, flags | os.O_NONBLOCK))
            except OSError:
                continue
            # Opened: only if Ray closed that descriptor and reused it for something else.
            assert not link_of(path).startswith("socket:"), path


def link_of(path: str) -> str:
    """Where a /proc/PID/fd entry points ("" once the descriptor is closed)."""
    try:
        return os.readlink(path)
    except OSError:
        return ""


def joins(cluster: dict[str, str]) -> dict[str, str]:
    """The environment that joins the cluster (its token)."""
    return {k: v for k, v in cluster.items() if k not in ("address", "root")}


def parent_of(pid: int) -> tuple[int, bytes]:
    """A process's parent: its pid and command line."""
    parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return parent, Path(f"/proc/{parent}/cmdline").read_bytes()


@pytest.mark.anyio
async def test_a_foreground_spawn_and_a_task_run_on_the_cluster(
    tmp_path: Path, cluster: dict[str, str]
) -> None:
    env = joins(cluster)
    args = ("--engine", "ray", "--address", cluster["address"])
    quick = {"prompt": "go", "ext": ["lazy"], "model": f"scripted:{tmp_path / 'quick.yaml'}"}
    long = {**quick, "model": f"scripted:{tmp_path / 'long.yaml'}"}
    with http_serve(tmp_path, *args, env=env) as serve, anyio.fail_after(RAY_LIMIT_S):
        async with http_client(serve.url, mode="legacy") as client:
            done = await client.call_tool("spawn_subagent", quick)
            assert done.content[0].text == "done quick", serve.stderr()
            assert done.structured_content["status"] == "completed"
            assert (serve.home / "sessions" / done.structured_content["session_id"]).is_dir()

            created = await legacy_task_call(client, "spawn_subagent", quick, 60_000)
            task_id = created["task"]["taskId"]
            result = await request(client, "tasks/result", {"taskId": task_id})
            assert result["content"][0]["text"] == "done quick"

            # A stop reaches the run on its node through the task's mailbox.
            running = await legacy_task_call(client, "spawn_subagent", long, 60_000)
            long_id = running["task"]["taskId"]
            in_store = lambda: "running" in statuses(serve.home)  # noqa: E731
            assert await anyio.to_thread.run_sync(wait_until, in_store, LIMIT_S)
            # The run's worker process is a child of a Ray worker, not of serve.
            (worker,) = workers(tmp_path)
            parent, command = parent_of(worker)
            assert b"ray::" in command
            assert parent != serve.proc.pid
            assert_channel_unopenable(worker, parent)
            cancelled = await request(client, "tasks/cancel", {"taskId": long_id})
            assert cancelled["status"] == "cancelled"
            assert (await task_until(client, long_id, "cancelled"))["status"] == "cancelled"
        assert sorted(statuses(serve.home)) == ["completed", "completed", "stopped"]
        assert wait_until(lambda: workers(tmp_path) == [], LIMIT_S), workers(tmp_path)


def secret_env(cluster: dict[str, str]) -> dict[str, str]:
    """serve's environment with its own token and a model key beside the cluster's."""
    return {**joins(cluster), "SUBAGENT_SERVE_TOKEN": SERVE_TOKEN, "RAY_TEST_API_KEY": MODEL_KEY}


@pytest.mark.anyio
async def test_a_ray_worker_is_denied_the_token_file_and_never_sees_a_token(
    tmp_path: Path, cluster: dict[str, str]
) -> None:
    sandbox = mechanism_problem() is None
    tokens = write_tokens(tmp_path)
    args = ["--engine", "ray", "--address", cluster["address"], "--token-file", str(tokens)]
    if sandbox:
        args += ["--sandbox", "required"]
    secrets = (SERVE_TOKEN, ALICE, BOB, MODEL_KEY)
    pattern = " ".join(f"-e {value}" for value in secrets)
    ray_token = Path(cluster["root"]) / "token"  # the cluster's key, on this node
    calls = [
        {"tool": "bash", "args": {"command": f"cat {tokens}; echo rc=$?"}},
        {"tool": "bash", "args": {"command": f"cat {ray_token}; echo ray-token-rc=$?"}},
        {"tool": "read", "args": {"path": "tokens"}},
        # Its shell's variables, and every process's environment block it may read
        # (its worker's and the Ray worker's above it among them).
        {
            "tool": "bash",
            "args": {
                "command": "env | grep -c -e SUBAGENT_SERVE_TOKEN -e SUBAGENT_CALLER_TOKEN "
                f"-e RAY_TEST_API_KEY -e SUBAGENT_SECRETS_FD; echo shell-done; "
                f"grep -l -a -F {pattern} /proc/[0-9]*/environ 2>/dev/null | wc -l; "
                "echo procs-done"
            },
        },
    ]
    script = tmp_path / "steal.yaml"
    script.write_text(json.dumps({"steps": [{"call": calls}, {"say": "tried"}]}))
    with http_serve(tmp_path, *args, env=secret_env(cluster)) as serve:
        with anyio.fail_after(RAY_LIMIT_S):
            async with http_client(serve.url, token=ALICE) as alice:
                done = await alice.call_tool(
                    "spawn_subagent", {"prompt": "go", "model": f"scripted:{script}"}
                )
    content = done.structured_content
    assert content is not None and content["status"] == "completed", (done, serve.stderr())
    events = session_events(serve.home, content["session_id"])
    results = [e["content"] for e in events if e["type"] == "tool_result"]
    assert len(results) == 4, results
    for text in results:
        assert MARKER not in text and "alice ****" not in text, results
        assert ray_token.read_text() not in text, results
    assert any("'tokens' is a secret file" in t and "refused" in t for t in results), results
    if sandbox:
        assert any("Permission denied" in t and "\nrc=1" in t for t in results), results
        assert any("Permission denied" in t and "ray-token-rc=1" in t for t in results), results
    (probe,) = [t for t in results if "shell-done" in t]
    assert probe.split() == ["0", "shell-done", "0", "procs-done"], probe


@pytest.mark.anyio
async def test_a_ray_worker_masks_serves_secrets_and_ray_keeps_none(
    tmp_path: Path, cluster: dict[str, str]
) -> None:
    script = tmp_path / "say.yaml"
    said = f"bob's is {BOB}, mine {ALICE}, serve's {SERVE_TOKEN}, the model's {MODEL_KEY}"
    script.write_text(json.dumps({"steps": [{"say": said}]}))
    args = ("--engine", "ray", "--address", cluster["address"])
    args += ("--token-file", str(write_tokens(tmp_path)))
    with http_serve(tmp_path, *args, env=secret_env(cluster)) as serve:
        with anyio.fail_after(RAY_LIMIT_S):
            async with http_client(serve.url, token=ALICE) as alice:
                done = await alice.call_tool(
                    "spawn_subagent", {"prompt": "go", "model": f"scripted:{script}"}
                )
    assert done.structured_content is not None, (done, serve.stderr())
    answer = json.dumps(done.structured_content) + json.dumps(
        [c.model_dump() for c in done.content]
    )
    assert "bob's is ****, mine ****, serve's ****, the model's ****" in answer, answer
    stored = all_bytes_under(serve.home)
    assert b"bob's is" in stored  # the session was recorded at all
    # Not at rest, nor anywhere Ray wrote (its logs, session files, spilled objects).
    written = stored + all_bytes_under(Path(cluster["root"]))
    for value in (BOB, ALICE, SERVE_TOKEN, MODEL_KEY):
        assert value.encode() not in written, value


@pytest.mark.anyio
async def test_a_ray_worker_exports_its_spans_under_the_hosts_traceparent(
    tmp_path: Path, cluster: dict[str, str]
) -> None:
    quick = {"prompt": "go", "ext": ["lazy"], "model": f"scripted:{tmp_path / 'quick.yaml'}"}
    meta = {"traceparent": f"00-{PARENT_TRACE}-{PARENT_SPAN}-01"}
    args = ("--engine", "ray", "--address", cluster["address"])
    with OtlpReceiver() as receiver:
        env = {**joins(cluster), "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
        env["OTEL_EXPORTER_OTLP_HEADERS"] = f"x-api-key={OTLP_KEY}"
        with http_serve(tmp_path, *args, env=env) as serve, anyio.fail_after(RAY_LIMIT_S):
            async with http_client(serve.url) as client:
                done = await client.call_tool("spawn_subagent", quick, meta=meta)
            assert done.structured_content is not None, (done, serve.stderr())
            assert done.structured_content["status"] == "completed"
        spans = receiver.wait_for(
            lambda got: bool(named(got, "invoke_agent")) and bool(named(got, "tools/call spawn")),
            SPANS_LIMIT_S,
        )
    (run,) = named(spans, "invoke_agent general-purpose")
    (server_span,) = [s for s in ancestors(run, spans) if s.name == "tools/call spawn_subagent"]
    assert run.trace_id == PARENT_TRACE
    assert server_span.parent_id == PARENT_SPAN
    assert run.parent_id == server_span.span_id  # the worker's parent came with its job
    (mcp_call,) = named(spans, "MCP send tools/call echo")  # its servers' calls traced too
    assert mcp_call.trace_id == PARENT_TRACE
    # The collector's key came sealed to the worker (it still sends it), not as a task
    # argument: nothing Ray wrote and nothing in the store holds it.
    assert set(receiver.api_keys) == {OTLP_KEY}
    written = all_bytes_under(serve.home) + all_bytes_under(Path(cluster["root"]))
    assert OTLP_KEY.encode() not in written


@pytest.mark.anyio
async def test_a_same_user_process_cannot_forge_a_runs_result(
    tmp_path: Path, cluster: dict[str, str]
) -> None:
    """A process of the user takes each run's worker's fds 0 and 1 in the moment after its
    execve (before it turns non-dumpable): it holds /dev/null, not the run's channel, so it
    reads no box and the results are the worker's, not the `agent_end` it writes."""
    script = tmp_path / "honest.yaml"
    script.write_text("steps:\n  - sleep: 1\n    say: bob's honest answer\n")
    log = tmp_path / "grab.log"
    runs = 3
    grab = start_grab(log, tmp_path, runs)
    try:
        assert await anyio.to_thread.run_sync(wait_until, log.exists, LIMIT_S)
        args = ("--engine", "ray", "--address", cluster["address"])
        env = joins(cluster)
        with http_serve(tmp_path, *args, env=env) as serve, anyio.fail_after(RAY_LIMIT_S):
            async with http_client(serve.url, mode="legacy") as client:
                for _ in range(runs):
                    spawn = {"prompt": "go", "model": f"scripted:{script}"}
                    done = await client.call_tool("spawn_subagent", spawn)
                    assert done.structured_content["status"] == "completed", serve.stderr()
                    assert done.content[0].text == "bob's honest answer"
    finally:
        grab.kill()
        grab.wait()
    entries = _log_entries(log)
    # It took some worker's fds in that moment (a loaded machine may hide one or two).
    assert any("worker" in e for e in entries), entries
    assert _taken(entries) <= {os.devnull}, entries
    assert not any("peeked" in e for e in entries), entries


def start_grab(log: Path, workspace: Path, runs: int) -> subprocess.Popen[bytes]:
    """The grabbing process, for the `runs` sealed workers started in `workspace`."""
    argv = [str(log), str(workspace), str(RAY_LIMIT_S), "--sealed", str(runs)]
    return subprocess.Popen(
        [sys.executable, "-c", GRAB, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
