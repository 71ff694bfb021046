"""Run one hook command as Claude Code does: the user's own command, in the workspace.

Not in the model's sandbox (a hook is the user's trusted config, read at the start from
files the model could not have written), but cleaned up like every other process: its
own process group, killed at its timeout and when it ends (a hook's background job does
not outlive it), guarded by the session's watchdog if the launcher dies meanwhile. Its
environment is the launcher's without credentials (as every child's), plus
CLAUDE_PROJECT_DIR.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from launcher.exec_path import absolute_path, with_absolute_path
from launcher.hooks.protocol import HookRun
from launcher.procs.group import end_call_group, spawn_group
from launcher.procs.pyenv import interpreter_env
from launcher.secrets import public_environment

if TYPE_CHECKING:
    from anyio.abc import ByteReceiveStream

    from launcher.config.hooks_field import HookSpec
    from launcher.procs.watchdog import Watchdog

MAX_OUTPUT_BYTES = 1024 * 1024
"""Of each of stdout and stderr, what is kept; a hook's answer is a line or a JSON object."""
DRAIN_GRACE_S = 0.5
"""After the hook exits, how long a background job holding its output may keep writing."""
PROJECT_DIR_VAR = "CLAUDE_PROJECT_DIR"
_PLACEHOLDERS = (f"${{{PROJECT_DIR_VAR}}}", f"${PROJECT_DIR_VAR}")


def hook_argv(spec: HookSpec, project_dir: Path) -> list[str]:
    """Exec form (`args` given: no shell, placeholders replaced) or shell form (`sh -c`)."""
    if spec.args is not None:
        return [_substitute(part, project_dir) for part in (spec.command, *spec.args)]
    shell = "bash" if spec.shell == "bash" else "/bin/sh"
    if shell == "bash":
        shell = shutil.which("bash", path=absolute_path(os.environ.get("PATH"))) or "/bin/bash"
    return [shell, "-c", spec.command]


def hook_environment(project_dir: Path) -> dict[str, str]:
    """What a hook process sees: the launcher's public environment and CLAUDE_PROJECT_DIR;
    PATH without empty or relative entries (the hook starts in the workspace).

    Claude Code removes OpenTelemetry exporter settings from every process it starts.
    """
    env = {k: v for k, v in public_environment().items() if not k.startswith("OTEL_")}
    env[PROJECT_DIR_VAR] = str(project_dir)
    # Unconfined, in the workspace: no path to a program, module or library the model wrote.
    return with_absolute_path(interpreter_env(env, project_dir), project_dir)


async def run_hook(
    spec: HookSpec,
    stdin: bytes,
    *,
    cwd: Path,
    project_dir: Path,
    watchdog: Watchdog | None = None,
) -> HookRun:
    """Run `spec` with `stdin`, to its end or its timeout; its group is killed either way."""
    argv = hook_argv(spec, project_dir)
    if watchdog is not None:
        argv = watchdog.join_argv(argv)
    try:
        process = await spawn_group(
            argv,
            cwd=cwd,
            env=hook_environment(project_dir),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        return HookRun(code=None, failure=f"{argv[0]}: {exc.strerror or exc}")
    if watchdog is not None:
        watchdog.guard(process.pid)
    out, err = bytearray(), bytearray()
    try:
        with anyio.move_on_after(spec.timeout) as deadline:
            await _talk(process, stdin, out, err)
    finally:
        # A hook's background job dies with it, as a bash call's does.
        await end_call_group(process, watchdog.release if watchdog is not None else None)
    code = None if deadline.cancelled_caught else process.returncode
    return HookRun(code, _text(out), _text(err))


async def _talk(process: Any, stdin: bytes, out: bytearray, err: bytearray) -> None:
    """Feed stdin, collect stdout and stderr, until the hook exits (plus a short drain)."""
    drained = [anyio.Event(), anyio.Event()]

    async def feed() -> None:
        try:
            await process.stdin.send(stdin)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass  # a hook need not read its input
        finally:
            await process.stdin.aclose()

    async def pump(stream: ByteReceiveStream, into: bytearray, done: anyio.Event) -> None:
        try:
            async for chunk in stream:
                into += chunk[: max(0, MAX_OUTPUT_BYTES - len(into))]
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(feed)
        tg.start_soon(pump, process.stdout, out, drained[0])
        tg.start_soon(pump, process.stderr, err, drained[1])
        await process.wait()
        with anyio.move_on_after(DRAIN_GRACE_S):
            for done in drained:
                await done.wait()
        tg.cancel_scope.cancel()


def _substitute(text: str, project_dir: Path) -> str:
    for placeholder in _PLACEHOLDERS:
        text = text.replace(placeholder, str(project_dir))
    return text


def _text(data: bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")


def default_project_dir(workspace: Path) -> Path:
    """CLAUDE_PROJECT_DIR when discovery named no project (a hermetic config dir)."""
    return Path(os.path.abspath(workspace))
