"""A stdio server's process: its environment, its spawn, and what the transport knows of it.

The SDK's `stdio_client` hides the child's pid and kills the group only when the
leader outlives stdin EOF, which orphans grandchildren (see notes/mcp-sdk-v2.md).
Here the server runs in its own group (procs/group.py), its stderr comes to the launcher
through a pipe (masked into the server's log), and the group always ends. SDK-free on
purpose: a server is spawned before the SDK is imported (that import costs more than
half a second, which then overlaps the server's start-up).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.abc import Process

from launcher.errors import SpawnError
from launcher.procs.group import spawn_group, wait_until

BASE_ENV_VARS = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR")
"""The minimal environment every server gets on top of what its spec declares."""


def server_environment(declared: dict[str, str]) -> dict[str, str]:
    """The base environment plus the server's declared variables (which win)."""
    env = {k: v for k, v in os.environ.items() if k in BASE_ENV_VARS and not v.startswith("()")}
    env.update(declared)
    return env


def resolve_command(command: str) -> str:
    """`python`/`python3` mean this interpreter, so stub servers run in our environment."""
    return sys.executable if command in ("python", "python3") else command


@dataclass
class StdioChild:
    """What the transport knows about its server process.

    `lost` is set at stdout EOF or when the leader exits, before the SDK sees the stream end;
    `failure` says why when the transport itself gave up on the server (set before `lost`).
    """

    pid: int | None = None
    lost: anyio.Event = field(default_factory=anyio.Event)
    failure: str | None = None
    process: Process | None = None

    @property
    def returncode(self) -> int | None:
        """The leader's exit status once it has exited (negative: killed by that signal)."""
        return self.process.returncode if self.process is not None else None

    def with_exit_status(self, reason: str) -> str:
        """`reason`, plus the leader's exit status once it has exited."""
        code = self.returncode
        return f"{reason} (exit status {code})" if code is not None else reason

    async def wait_exit(self, limit_s: float) -> int | None:
        """The exit status, waiting at most `limit_s` for the leader to be reaped."""
        await wait_until(lambda: self.returncode is not None, limit_s)
        return self.returncode


async def spawn_server(
    command: str,
    args: list[str],
    *,
    env: dict[str, str],
    cwd: Path | None,
    join: Callable[[list[str]], list[str]] | None = None,
) -> Process:
    """Start the server as the leader of a new session and process group; stderr is a pipe
    (the connection masks it into the server's log).

    `join` (the watchdog's) rewrites the argv so the server starts inside the session's sweep.
    """
    if cwd is not None and not await anyio.Path(cwd).is_dir():
        # Checked first: exec would blame the command ("command not found: <cwd>").
        raise SpawnError(f"working directory does not exist: {cwd}")
    argv = [resolve_command(command), *args]
    argv = join(argv) if join is not None else argv
    return await spawn_group(argv, env=env, cwd=cwd, stderr=subprocess.PIPE)
