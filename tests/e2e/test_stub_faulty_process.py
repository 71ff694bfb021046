"""`faulty --ignore-sigterm` outlives SIGTERM and EOF; `--grandchild` leaves a same-group child."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

from mcp_servers.faulty import EOF_IGNORED_LINE
from tests.e2e.stub_client import STARTUP_TIMEOUT_S, connect_stub, result_text

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


# Long enough for a process that honours SIGTERM to be gone, short enough for CI.
SURVIVAL_WINDOW_S = 0.7


async def _read_until(stream: anyio.abc.ByteReceiveStream, needle: bytes) -> bytes:
    seen = b""
    async for chunk in stream:
        seen += chunk
        if needle in seen:
            break
    return seen


async def test_ignore_sigterm_survives_eof_and_sigterm_until_sigkill() -> None:
    command = [sys.executable, "-m", "mcp_servers.faulty", "--ignore-sigterm"]
    async with await anyio.open_process(command, start_new_session=True) as proc:
        try:
            assert proc.stdin is not None and proc.stderr is not None
            await proc.stdin.aclose()
            with anyio.fail_after(STARTUP_TIMEOUT_S):
                stderr = await _read_until(proc.stderr, EOF_IGNORED_LINE.encode())
            proc.send_signal(signal.SIGTERM)
            with anyio.move_on_after(SURVIVAL_WINDOW_S) as survived:
                await proc.wait()
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            with anyio.fail_after(STARTUP_TIMEOUT_S):
                returncode = await proc.wait()

    assert EOF_IGNORED_LINE.encode() in stderr
    assert survived.cancelled_caught, "the process exited on SIGTERM"
    assert returncode == -signal.SIGKILL


async def test_grandchild_shares_the_server_process_group(tmp_path: Path) -> None:
    server_pidfile, grandchild_pidfile = tmp_path / "server.pid", tmp_path / "grandchild.pid"
    args = ("--pidfile", str(server_pidfile), "--grandchild", str(grandchild_pidfile))
    grandchild = 0
    try:
        async with connect_stub("faulty", *args, era="legacy", errlog=tmp_path / "err.log") as (
            client,
            _,
        ):
            with anyio.fail_after(STARTUP_TIMEOUT_S):
                ok = await client.call_tool("ok")
            server = int(server_pidfile.read_text())
            grandchild = int(grandchild_pidfile.read_text())
            server_group = os.getpgid(server)
            grandchild_group = os.getpgid(grandchild)
            cmdline = await anyio.Path(f"/proc/{grandchild}/cmdline").read_bytes()
    finally:
        if grandchild:
            os.kill(grandchild, signal.SIGKILL)

    assert result_text(ok) == "ok"
    assert grandchild_group == server_group
    assert server_group != os.getpgid(0)  # the SDK client started the server in its own group
    assert cmdline.split(b"\0")[:2] == [b"sleep", b"300"]
