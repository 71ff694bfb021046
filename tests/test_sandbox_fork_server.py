"""The fork server's client: a stopped (hung) or dead server is an OSError in bounded time,
never a wait without end, and a working one starts commands inside the holder's
namespaces, in the working directory resolved there."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from launcher.tools.sandbox import entry
from launcher.tools.sandbox.policy import SandboxPolicy
from launcher.tools.sandbox.readonly import Holder

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[entry.ForkServer]:
    (tmp_path / "ws").mkdir()
    try:
        holder = Holder(SandboxPolicy(deny_read=(), writable=(tmp_path / "ws",)))
    except OSError as exc:
        pytest.skip(f"no holder namespace here: {exc}")
    started = entry.ForkServer.start(subprocess.Popen, holder.fds, network=False)
    try:
        yield started
    finally:
        os.kill(started.pid, signal.SIGCONT)
        started.close()
        holder.close()


async def _run(server: entry.ForkServer, command: str, cwd: Path) -> tuple[int, str]:
    process = await entry.start(
        server, ["bash", "-c", command], env={"PATH": "/usr/bin:/bin"}, cwd=str(cwd)
    )
    out = b"".join([chunk async for chunk in process.stdout])
    await process.aclose()
    assert process.returncode is not None
    return process.returncode, out.decode()


def test_a_command_starts_inside_in_its_directory(server: entry.ForkServer, tmp_path: Path) -> None:
    mine = os.readlink("/proc/self/ns/mnt")
    code, out = anyio.run(_run, server, "readlink /proc/self/ns/mnt; pwd; exit 3", tmp_path / "ws")
    assert code == 3, out
    ns, where = out.split()
    assert ns != mine and where == str(tmp_path / "ws"), out


def test_a_missing_directory_is_an_error_naming_it(
    server: entry.ForkServer, tmp_path: Path
) -> None:
    with pytest.raises(OSError, match=r"cannot change directory to .*nope"):
        anyio.run(_run, server, "true", tmp_path / "nope")


def test_a_stopped_server_is_an_error_in_bounded_time(
    server: entry.ForkServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(entry, "ANSWER_LIMIT_S", 1.0)
    os.kill(server.pid, signal.SIGSTOP)
    with pytest.raises(OSError, match="did not answer"):
        anyio.run(_run, server, "true", tmp_path / "ws")
    # Its socket is closed: a late answer reaches nobody, the next call fails at once.
    with pytest.raises(OSError, match="gone"):
        anyio.run(_run, server, "true", tmp_path / "ws")


def test_a_dead_server_is_an_error(server: entry.ForkServer, tmp_path: Path) -> None:
    os.kill(server.pid, signal.SIGKILL)
    with pytest.raises(OSError, match="gone"):
        anyio.run(_run, server, "true", tmp_path / "ws")


def test_the_command_is_found_on_its_own_path(server: entry.ForkServer, tmp_path: Path) -> None:
    """As Popen finds it: by the command's PATH, not the server's."""
    tool = tmp_path / "bin" / "only-here"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho found\n")
    tool.chmod(0o755)

    async def run() -> str:
        env = {"PATH": f"{tool.parent}:/usr/bin:/bin"}
        process = await entry.start(server, ["only-here"], env=env, cwd=str(tmp_path / "ws"))
        out = b"".join([chunk async for chunk in process.stdout])
        await process.aclose()
        return out.decode()

    assert anyio.run(run) == "found\n"
