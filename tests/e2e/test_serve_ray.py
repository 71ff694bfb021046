"""`serve --engine ray --address A`: each sub-agent a Ray task on a running local cluster
(`ray start --head` on loopback, token auth on, one cluster for the module): a foreground
spawn, a task, and a stop that reaches the run on its node; sessions land in the store."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from tests.e2e.batch_support import need_ray
from tests.e2e.conftest import wait_until
from tests.e2e.serve_http_support import LIMIT_S, http_client, http_serve, task_until
from tests.e2e.serve_tasks_support import legacy_task_call, request
from tests.e2e.test_serve import workers
from tests.e2e.test_serve_drain import statuses

pytestmark = pytest.mark.e2e

CLUSTER_LIMIT_S = 120.0
"""`ray start --head` on a loaded 2-core box (about 20 s idle)."""
RAY_LIMIT_S = 240.0
"""A first task on a fresh cluster starts a Ray worker, then ours: slow, once."""


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
        yield {"address": f"127.0.0.1:{port_file.read_text().strip()}", **env}
    finally:
        proc.send_signal(signal.SIGTERM)  # the head drains and ends every process it started
        try:
            proc.wait(CLUSTER_LIMIT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        out.close()
        shutil.rmtree(root, ignore_errors=True)


def parent_of(pid: int) -> tuple[int, bytes]:
    """A process's parent: its pid and command line."""
    parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return parent, Path(f"/proc/{parent}/cmdline").read_bytes()


@pytest.mark.anyio
async def test_a_foreground_spawn_and_a_task_run_on_the_cluster(
    tmp_path: Path, cluster: dict[str, str]
) -> None:
    env = {k: v for k, v in cluster.items() if k != "address"}
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
            cancelled = await request(client, "tasks/cancel", {"taskId": long_id})
            assert cancelled["status"] == "cancelled"
            assert (await task_until(client, long_id, "cancelled"))["status"] == "cancelled"
        assert sorted(statuses(serve.home)) == ["completed", "completed", "stopped"]
        assert wait_until(lambda: workers(tmp_path) == [], LIMIT_S), workers(tmp_path)
