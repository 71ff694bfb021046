"""The bash tool: one shell command in the workspace, in its own process group."""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from anyio.abc import ByteReceiveStream

from launcher.procs import strays
from launcher.procs.group import end_call_group, spawn_group
from launcher.secrets import public_environment
from launcher.telemetry import traces
from launcher.toolset.types import ToolResult

if TYPE_CHECKING:
    from launcher.tools.sandbox import ShellSandbox

MAX_BASH_TIMEOUT_S = 600.0
"""Upper bound for a model-requested timeout: one call must not pin a session for hours."""

DRAIN_GRACE_S = 0.5
"""After the shell exits, how long a background process holding its output pipe may keep
writing before the call returns (the pipe never reaches EOF while such a process lives)."""


class CappedOutput:
    """Keeps the head and tail of a byte stream within `cap` bytes, counting what it drops."""

    def __init__(self, cap: int) -> None:
        self.cap = max(cap, 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        """Append a chunk; the middle of an over-long stream is what gets dropped."""
        self.total += len(chunk)
        room = self.cap // 2 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            keep = self.cap - self.cap // 2
            self.tail = (self.tail + chunk)[-keep:]

    def text(self) -> str:
        """The kept output, with a note in the middle saying how many bytes were cut."""
        cut = self.total - len(self.head) - len(self.tail)
        if cut <= 0:  # one text: a character (or a secret) across the halves stays whole
            return (self.head + self.tail).decode("utf-8", errors="replace")
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        return f"{head}\n... [output cut: {cut} of {self.total} bytes omitted] ...\n{tail}"


def shell_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The launcher's environment minus credentials and the variables it hid as secrets;
    when tracing, TRACEPARENT names the tool call's span (the command's parent)."""
    env: dict[str, str] = traces().child_env(public_environment(base))
    return env


class GroupGuard(Protocol):
    """Kills a process group if the launcher dies mid-call (the session's watchdog)."""

    def join_argv(self, argv: list[str]) -> list[str]: ...

    def guard(self, pgid: int) -> None: ...

    def release(self, pgid: int) -> None: ...

    def remove_on_death(self, path: Path) -> None: ...

    def restore_on_death(self, record: Path) -> None: ...

    def end_on_death(self, init: int) -> None: ...

    def problem(self) -> str | None: ...


async def run_bash(
    command: str,
    cwd: Path,
    time_limit: float,
    cap: int,
    guard: GroupGuard | None = None,
    sandbox: ShellSandbox | None = None,
) -> ToolResult:
    """Run `bash -c command`; stdout and stderr merged, capped; the group dies at the end.

    Background processes the command started do not outlive the call: the whole process
    group is killed when the shell exits or the timeout fires, and by `guard` if the
    launcher itself is killed meanwhile. With a confining `sandbox` the command runs in
    it, and those that left the group die too (the commands' PID namespace is emptied)
    before the check; one that is `required` but has no mechanism refuses the command.
    """
    if sandbox is not None and sandbox.refuses:
        return ToolResult(_refusal(sandbox.problem), is_error=True)
    if sandbox is not None and sandbox.unchecked is not None:
        return ToolResult(_unchecked(sandbox.unchecked), is_error=True)
    if sandbox is not None and sandbox.unrepaired:
        return ToolResult(_unrepaired(sandbox.unrepaired), is_error=True)
    if sandbox is not None and sandbox.confined and guard is not None:
        missing = guard.problem()
        if missing is not None:
            return ToolResult(_no_watchdog(missing), is_error=True)
    argv = ["bash", "-c", command]
    if guard is not None:
        argv = guard.join_argv(argv)
    output = CappedOutput(cap)
    options: dict[str, Any] = {
        "cwd": cwd,
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.STDOUT,
    }
    process: Any
    if sandbox is not None and sandbox.confined:
        env = sandbox.environment(shell_environment())
        from launcher.tools.sandbox import SandboxRefused  # loaded with the sandbox itself

        try:
            process = await sandbox.spawn(argv, env=env, **options)
        except SandboxRefused as exc:
            return ToolResult(f"bash: {exc}", is_error=True)
        strays.note_child(process.pid)  # started on purpose: not an orphan to sweep
    else:
        process = await spawn_group(argv, env=shell_environment(), **options)
    assert process.stdout is not None
    if guard is not None:
        guard.guard(process.pid)
    try:
        with anyio.move_on_after(time_limit) as deadline:
            await _collect(process, process.stdout, output)
    finally:
        # The group outlives its leader when a command backgrounds work; kill it regardless.
        await end_call_group(process, guard.release if guard is not None else None)
        ended = True
        if sandbox is not None and sandbox.confined:
            # Every process the command started ends with it (those that left its group
            # too), before the check: nothing of it may plant after the put-back.
            with anyio.CancelScope(shield=True):
                ended = await anyio.to_thread.run_sync(sandbox.end_command)
    text = output.text()
    if sandbox is not None and sandbox.notices:
        # A serve worker's stderr is a log: what its commands lack reaches the model too.
        said, sandbox.notices[:] = list(sandbox.notices), []
        text = "".join(f"[subagent: sandbox: {line}]\n" for line in said) + text
    undone: list[str] = []
    defused: list[str] = []
    cut: str | None = None
    if sandbox is not None:
        # Off the event loop: the walk is bounded (entries, depth, time), not instant.
        undone = await anyio.to_thread.run_sync(sandbox.restore_protected)
        defused = await anyio.to_thread.run_sync(sandbox.defuse_nested)
        cut = sandbox.cut_line()
    if undone or defused or cut or not ended:
        notes = []
        if not ended:
            notes.append(
                "Error: processes this command started did not end in time (they are ended "
                "with the session); no more commands are run."
            )
        if undone:
            notes.append(
                "Protected paths were changed and have been put back as they were: "
                f"{', '.join(undone)} (the model may not change config or what git runs)."
            )
        if defused:
            from launcher.tools.sandbox import defused_line

            notes.append(defused_line(defused)[0].upper() + defused_line(defused)[1:] + ".")
        if cut:
            notes.append(f"{cut[0].upper()}{cut[1:]}; no more commands are run.")
        if sandbox is not None and sandbox.unrepaired:
            from launcher.tools.sandbox import unrepaired_line

            line = unrepaired_line(sandbox.unrepaired)
            notes.append(f"Error: {line}; no more commands are run.")
        return ToolResult("\n".join([text, *notes]).strip(), is_error=True)
    if deadline.cancelled_caught:
        note = f"Command timed out after {time_limit:g}s; its process group was killed."
        return ToolResult(f"{note}\n{text}".rstrip(), is_error=True)
    code = process.returncode
    if code == 0:
        return ToolResult(text if text else "(no output)")
    status = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
    return ToolResult(f"Command failed ({status}).\n{text}".rstrip(), is_error=True)


def _unchecked(where: str) -> str:
    from launcher.trust.nested import shown

    return (
        f"bash: the workspace could not be checked whole for git repositories the model "
        f"made (the walk was cut at '{shown(where)}'), so no more commands are run."
    )


def _unrepaired(paths: list[str]) -> str:
    return (
        "bash: what an earlier command changed could not be put back or defused "
        f"({', '.join(paths)}), so no more commands are run."
    )


def _refusal(problem: str | None) -> str:
    return (
        f"bash: sandbox: unavailable ({problem}); this agent's sandbox is required, so the "
        "command was not run."
    )


def _no_watchdog(problem: str) -> str:
    # The user must hear it too: the session cannot clean up after a SIGKILL.
    logging.getLogger(__name__).warning("bash: no watchdog (%s): commands refused", problem)
    return (
        f"bash: the session's watchdog is not running ({problem}); without it a killed "
        "launcher would leave this command's changes and processes behind, so sandboxed "
        "commands are refused."
    )


async def _collect(process: Any, stream: ByteReceiveStream | Any, out: CappedOutput) -> None:
    drained = anyio.Event()

    async def pump() -> None:
        try:
            async for chunk in stream:
                out.add(chunk)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        drained.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump)
        await process.wait()
        with anyio.move_on_after(DRAIN_GRACE_S):
            await drained.wait()
        tg.cancel_scope.cancel()
