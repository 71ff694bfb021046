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
from launcher.exec_path import with_absolute_path
from launcher.procs.group import spawn_group, wait_until

BASE_ENV_VARS = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR")
"""The minimal environment every server gets on top of what its spec declares."""


def server_environment(
    declared: dict[str, str], workspace: str | os.PathLike[str] | None = None
) -> dict[str, str]:
    """The base environment plus the server's declared variables (which win); PATH keeps
    only its absolute entries, so a bare command is never found in the workspace, and the
    inherited one none inside `workspace` (a PATH the spec declares is the user's word)."""
    env = {k: v for k, v in os.environ.items() if k in BASE_ENV_VARS and not v.startswith("()")}
    with_absolute_path(env, workspace)
    env.update(declared)
    return with_absolute_path(env)


def resolve_command(command: str) -> str:
    """`python`/`python3` mean this interpreter, so stub servers run in our environment."""
    return sys.executable if command in ("python", "python3") else command


def python_args(
    program: str, args: list[str], cwd: Path | None, pythonpath: str | None = None
) -> list[str]:
    """`args` with `-P` first when `program` is this interpreter running `-m MODULE` and
    MODULE's top-level package is found without the working directory.

    `-m` puts the working directory (the workspace) first on `sys.path`, so a package the
    model wrote there would shadow an installed one. A module found only in the workspace
    is the user's own code there, and keeps the old lookup.
    """
    if os.path.realpath(program) != os.path.realpath(sys.executable):  # python3, python: one
        return args
    module = _module_of(args)
    if module is None:  # PYTHONSAFEPATH is not relied on: the server's env need not have it
        return args
    top = module.split(".", 1)[0]
    # The server's own PYTHONPATH counts: a module found there is no workspace code either.
    extra = [e for e in (pythonpath or "").split(os.pathsep) if os.path.isabs(e)]
    return ["-P", *args] if top and _found_outside(top, cwd, extra) else args


def _module_of(args: list[str]) -> str | None:
    """The MODULE of `-m MODULE` among the interpreter's options; None if there is none,
    or if `-P`/`-I` already keeps the working directory off the path."""
    rest = iter(args)
    for arg in rest:
        if arg.startswith("--") and arg != "--":
            if arg == "--check-hash-based-pycs":
                next(rest, None)  # its value
            elif not arg.startswith("--check-hash-based-pycs="):
                return None  # --version, --help: no module runs
            continue
        if not arg.startswith("-") or arg in ("-", "--"):
            return None  # a script, or stdin
        flags = arg[1:]
        for i, flag in enumerate(flags):
            tail = flags[i + 1 :]
            if flag in "PI":
                return None
            if flag == "c":
                return None
            if flag == "m":
                return tail or next(rest, None)
            if flag in "WX":
                if not tail:
                    next(rest, None)
                break
    return None


def _found_outside(top: str, cwd: Path | None, extra: list[str] | None = None) -> bool:
    """Whether this interpreter finds the top-level module `top` with the working directory
    left off `sys.path` (what `-P` changes; its subdirectories on the path stay)."""
    import importlib.machinery

    if top in sys.builtin_module_names:
        return True
    here = os.path.realpath(cwd if cwd is not None else os.getcwd())
    path = [
        e
        for e in [*(extra or []), *sys.path]
        if e and os.path.isabs(e) and os.path.realpath(e) != here
    ]
    for finder in sys.meta_path:
        if finder is importlib.machinery.PathFinder:
            spec = importlib.machinery.PathFinder.find_spec(top, path)
        else:
            find = getattr(finder, "find_spec", None)
            try:
                spec = find(top, None) if find is not None else None
            except (ImportError, ValueError):
                spec = None
        if spec is not None:
            return True
    return False


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
    program = resolve_command(command)
    argv = [program, *python_args(program, args, cwd, env.get("PYTHONPATH"))]
    argv = join(argv) if join is not None else argv
    return await spawn_group(argv, env=env, cwd=cwd, stderr=subprocess.PIPE)
