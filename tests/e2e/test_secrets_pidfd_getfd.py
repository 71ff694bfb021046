"""With `sandbox: off`, a sub-agent's shell takes a sibling worker's hand-over socket
with pidfd_getfd() while that worker starts (dumpable, between `execve` and its first
line), peeks into it, keeps it and peeks again, and slips a socket of its own in as the
worker's request: it never gets the secrets. The siblings still run to completion
(that a pulled hand-over still delivers: tests/test_hidden_pull.py).

A worker used to inherit a socket already filled with every key: a same-user process
that duplicated it in that moment read them all (MSG_PEEK leaves them for the worker).
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.spawn_support import write_config

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pidfd_getfd is Linux's"),
]

LIMIT_S = 300.0
"""Bounds the test: serve, the probe and the workers, each an interpreter, on 2 cores."""
WORKERS = 12
PROBE_LIMIT_S = 280
PREFIX = "sk-test-PIDFD-"
SHELL_AGENT = "---\nname: shell\ntools: [bash]\nextensions: false\nsandbox: off\n---\nRun.\n"
QUIET_AGENT = "---\nname: quiet\ntools: [bash]\nextensions: false\nsandbox: off\n---\nSay done.\n"

PROBE = f"""
import array, ctypes, json, os, socket, sys, time
prefix = {PREFIX!r}.encode()
libc = ctypes.CDLL(None, use_errno=True)
me = os.getpid()
seen, grabbed, stolen, spoofs = set(), [], [], []
found = set()
deadline = time.monotonic() + {PROBE_LIMIT_S}

def peek(sock):
    try:
        data = sock.recv(1 << 20, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except OSError:
        return
    if prefix in data:
        found.add(sock.fileno())

passes = 0
while not os.path.exists('stop') and time.monotonic() < deadline:
    for pid in os.listdir('/proc'):
        if not pid.isdigit() or int(pid) == me or pid in seen:
            continue
        try:
            cmdline = open(f'/proc/{{pid}}/cmdline', 'rb').read()
        except OSError:
            continue
        if b'launcher.backend.worker' not in cmdline:
            continue
        seen.add(pid)
        try:
            environ = open(f'/proc/{{pid}}/environ', 'rb').read().split(b'\\0')
        except OSError:
            continue  # already non-dumpable: too late
        value = [e.split(b'=', 1)[1] for e in environ if e.startswith(b'SUBAGENT_SECRETS_FD=')]
        if not value:
            continue
        fd = int(value[0].decode().split(':')[-1])
        try:
            pidfd = os.pidfd_open(int(pid))
        except OSError:
            continue
        got = libc.syscall(438, pidfd, fd, 0)
        os.close(pidfd)
        if got < 0:
            continue
        try:
            sock = socket.socket(fileno=got)
        except OSError:  # that number was already another file: too late
            os.close(got)
            continue
        grabbed.append(pid)
        stolen.append(sock)
        peek(sock)
        # Pretend to be the worker asking: a socket pair of ours, one end passed over.
        mine, theirs = socket.socketpair()
        try:
            fds = array.array('i', [theirs.fileno()]).tobytes()
            sock.sendmsg([b'?'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
            spoofs.append(mine)
        except OSError:
            mine.close()
        theirs.close()
    for sock in stolen + spoofs:
        peek(sock)
    passes += 1
    if passes == 1:
        open('started', 'w').close()
for sock in stolen + spoofs:
    peek(sock)
report = dict(found=sorted(found), seen=len(seen), grabbed=len(grabbed), passes=passes)
open('report.json', 'w').write(json.dumps(report))
"""


@pytest.mark.anyio
async def test_a_sibling_gets_no_secret_through_pidfd_getfd(tmp_path: Path) -> None:
    key = f"{PREFIX}{secrets.token_hex(12)}"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "probe.py").write_text(PROBE)
    probe_script = tmp_path / "probe.json"
    call = {"tool": "bash", "args": {"command": f"{sys.executable} probe.py"}}
    call["args"]["timeout"] = PROBE_LIMIT_S + 10  # type: ignore[index]
    probe_script.write_text(json.dumps({"steps": [{"call": [call]}, {"say": "probed"}]}))
    quiet_script = tmp_path / "quiet.json"
    quiet_script.write_text(json.dumps({"steps": [{"say": "done"}]}))
    config = write_config(tmp_path / "cfg", {}, {"shell": SHELL_AGENT, "quiet": QUIET_AGENT})
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": key}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    argv = ["-m", "launcher.cli", "serve", "--config-dir", str(config)]
    argv += ["--workspace", str(workspace), "--max-concurrent", "4"]
    argv += ["--scripted-dir", str(tmp_path)]
    params = StdioServerParameters(command=sys.executable, args=argv, env=env, cwd=str(tmp_path))
    with anyio.fail_after(LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S) as c:

            async def spawn(agent: str, script: Path) -> str:
                args = {"prompt": "go", "agent": agent, "model": f"scripted:{script}"}
                started = await c.call_tool("spawn_subagent", {**args, "background": True})
                assert started.structured_content is not None, started
                return str(started.structured_content["agent_id"])

            async def result(agent_id: str) -> dict:
                args = {"agent_id": agent_id, "wait": True}
                got = await c.call_tool("get_subagent_result", args)
                assert got.structured_content is not None, got
                return dict(got.structured_content)

            prober = await spawn("shell", probe_script)
            while not (workspace / "started").exists():  # noqa: ASYNC110 (a file, no event)
                await anyio.sleep(0.05)
            quiet = [await spawn("quiet", quiet_script) for _ in range(WORKERS)]
            for agent_id in quiet:
                assert (await result(agent_id))["status"] == "completed"
            (workspace / "stop").touch()
            assert (await result(prober))["status"] == "completed"
    report = json.loads((workspace / "report.json").read_text())
    assert report["passes"] > 1 and report["seen"] > 0, report  # the probe did look
    assert report["found"] == [], f"a sibling's secrets were read: {report}"
    assert report["grabbed"] > 0, report  # it did hold hand-over sockets (the race was run)
