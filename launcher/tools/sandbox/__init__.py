"""The sandbox every process a built-in tool starts runs in (today: the bash tool's).

`ShellSandbox` is one session's: the agent's `sandbox:` mode, the policy (policy.py),
and a confined starter (spawner.py, or sandbox-exec on macOS). How the policy is
enforced lives in apply.py alone. `SUBAGENT_BASH_SANDBOX=1`, the older switch, now
means `required` for every agent.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from subprocess import DEVNULL, PIPE, STDOUT
from typing import Any

import anyio

from launcher import runtime
from launcher.config.sandbox_field import parse_mode
from launcher.config.types import SandboxMode, SandboxSettings
from launcher.errors import ConfigError
from launcher.procs import cgroup, strays
from launcher.procs.watchdog import TMP_PREFIX
from launcher.settings import BASH_SANDBOX, SANDBOX, bash_sandbox
from launcher.tools.sandbox import namespaces, pidns
from launcher.tools.sandbox.apply import MECHANISM_VAR, macos_argv, mechanism_problem
from launcher.tools.sandbox.ends import CommandEnds
from launcher.tools.sandbox.entry import ForkServer
from launcher.tools.sandbox.namespaces import namespaces_problem
from launcher.tools.sandbox.pidns import pidns_line
from launcher.tools.sandbox.policy import SandboxPolicy, build_policy
from launcher.tools.sandbox.readonly import Holder, degraded_line, holder_for
from launcher.tools.sandbox.spawner import ConfinedProcess, ConfinedSpawner
from launcher.trust import Protected, protected_set
from launcher.trust.guard import Guard
from launcher.trust.nested import NestedGuard

__all__ = [
    "LEGACY_VAR",
    "MECHANISM_VAR",
    "OVERRIDE_VAR",
    "ConfinedProcess",
    "SandboxPolicy",
    "ShellSandbox",
    "check_start",
    "describe",
    "effective_mode",
    "mechanism_problem",
    "unavailable_line",
]

LEGACY_VAR = BASH_SANDBOX.name
"""`1` (or `true`, `yes`): every agent's sandbox is `required`, with namespaces on top."""


def _legacy(env: Mapping[str, str]) -> bool:
    return bash_sandbox(env)


OVERRIDE_VAR = SANDBOX.name
"""`on`, `off` or `required` for every agent of the run (and its workers): `--sandbox`."""


def effective_mode(settings: SandboxSettings, env: Mapping[str, str] | None = None) -> SandboxMode:
    """The mode a run uses: `--sandbox` over the agent's field; the legacy switch over both."""
    env = os.environ if env is None else env
    if _legacy(env):
        return SandboxMode.REQUIRED
    raw = SANDBOX.text(env).strip()
    if not raw:
        return settings.mode
    mode = parse_mode(raw)
    if mode is None:
        raise ConfigError(f"{OVERRIDE_VAR}={raw!r}: expected on, off or required")
    return mode


class SandboxRefused(OSError):
    """A `required` sandbox found, at a command's start, that it cannot give what it must:
    the command is not run."""


def unavailable_line(problem: str) -> str:
    """What a run says, once, when it cannot confine its shell."""
    return f"sandbox: unavailable ({problem})"


LEFT_RUNNING = f"the processes a command left (still running after {pidns.END_LIMIT_S:g}s)"


class ShellSandbox:
    """One session's confinement of the processes its built-in tools start."""

    def __init__(
        self,
        settings: SandboxSettings | None,
        *,
        workspace: Path,
        state_home: Path,
        home: Path,
        env: Mapping[str, str] | None = None,
        on_tmp: Callable[[Path], None] | None = None,
        on_record: Callable[[Path], None] | None = None,
        on_init: Callable[[int], None] | None = None,
    ) -> None:
        """`on_tmp` is told the private temporary directory once made (the watchdog removes
        it if the launcher dies), `on_record` the record of the protected places (the
        watchdog puts them back if the launcher dies mid-command), `on_init` the pid of
        the init of the commands' PID namespace (the watchdog kills it, and waits until
        the namespace is empty, before it puts anything back)."""
        # None: the agent omitted the field and no config default was applied (`on`).
        self.settings = settings = settings or SandboxSettings()
        self.mode = effective_mode(settings, env=env)
        self.problem = None if self.mode is SandboxMode.OFF else mechanism_problem(env)
        self.namespaces = _legacy(os.environ if env is None else env)
        if self.problem is None and self.namespaces:
            self.problem = namespaces_problem()
        self._where = (workspace, state_home, home)
        # Taken now, when the session starts: what the model may not change is as it is.
        # `off`: the shell is the user, who may write anywhere; nothing is protected.
        protected = (
            Protected()
            if self.mode is SandboxMode.OFF
            else protected_set(workspace, write_config=settings.write_config)
        )
        off = self.mode is SandboxMode.OFF
        self.guard = Guard(protected, home=state_home, workspace=None if off else workspace)
        if on_record is not None and self.guard.record_dir is not None:
            on_record(self.guard.record_dir)
        # The git repositories in the workspace when the first live session of it started
        # are the user's; later ones the model's (noted with the copy, shared like it).
        before = self.guard.nested
        self.nested = (
            None
            if off
            else NestedGuard.start(workspace)
            if before is None  # a copy taken without (an older launcher's record)
            else NestedGuard.of(workspace, before)
        )
        self._lock = threading.Lock()
        self._ends = CommandEnds()
        self._checking = threading.Lock()  # one put-back and walk at a time (run off the loop)
        self._spawner: ConfinedSpawner | None = None
        self._holder: Holder | None = None
        self._server: ForkServer | None = None
        self._tmp: Path | None = None
        self._on_tmp = on_tmp
        self._on_init = on_init
        self.left_running = False
        """A command left processes that did not die in time (no more commands run)."""
        self.notices: list[str] = []  # said once, also in the next command's result
        self.unrepaired_at_end: list[str] = []
        """What the session's end could not put back, defuse or remove (said on stderr)."""

    @property
    def confined(self) -> bool:
        """Whether commands run confined (the mode asks for it and the OS can)."""
        return self.mode is not SandboxMode.OFF and self.problem is None

    @property
    def way(self) -> str:
        """How commands get their read-only world, once one ran: `own namespace` (root),
        `fork server` (inside the holder's), `none` (Landlock alone), or `not started`."""
        if self._spawner is None:
            return "not started"
        if self._server is not None:
            return "fork server"
        from launcher.tools.sandbox.privileges import can_remount

        return "own namespace" if can_remount() else "none"

    @property
    def refuses(self) -> bool:
        """Whether every command must be refused: `required`, and no mechanism."""
        return self.mode is SandboxMode.REQUIRED and self.problem is not None

    @property
    def unrepaired(self) -> list[str]:
        """The protected places not put back and git dirs not defused (this user's rwx given
        back and tried again): every later command is refused; empty when none."""
        nested = [] if self.nested is None else self.nested.failed
        left = [LEFT_RUNNING] if self.left_running else []
        return [*self.guard.failed, *nested, *left]

    @property
    def unchecked(self) -> str | None:
        """Where the walk for the model's git repositories was cut short (the workspace is
        too large or deep to vouch for): commands are refused from then on; else None."""
        return None if self.nested is None else self.nested.cut

    def policy(self) -> SandboxPolicy:
        """This session's policy (creates its private temporary directory)."""
        workspace, state_home, home = self._where
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX))
            if self._on_tmp is not None:
                self._on_tmp(self._tmp)
        return build_policy(
            self.settings,
            workspace=workspace,
            state_home=state_home,
            home=home,
            tmp=self._tmp,
            protected=self.guard.protected.paths(),
        )

    def environment(self, base: dict[str, str]) -> dict[str, str]:
        """The command's environment: its temporary directory is the private one, and so
        are the caches (go, pip, npm... would fail writing theirs in the home)."""
        if not self.confined:
            return base
        self.policy()
        tmp = str(self._tmp)
        caches = {"XDG_CACHE_HOME": f"{tmp}/.cache", "npm_config_cache": f"{tmp}/.npm"}
        return {**base, **caches, "TMPDIR": tmp}

    async def spawn(self, argv: list[str], **kwargs: Any) -> Any:
        """Start `argv` confined, leading its own process group (kwargs as for Popen); each
        command started is ended by one `end_command`."""
        await self._ends.start()
        try:
            return await self._spawn(argv, **kwargs)
        except BaseException:
            self._ends.not_started()
            raise

    async def _spawn(self, argv: list[str], **kwargs: Any) -> Any:
        if sys.platform == "darwin" or self.namespaces:
            from launcher.procs.group import spawn_group

            wrapped = macos_argv if sys.platform == "darwin" else namespaces.wrap
            return await spawn_group(wrapped(argv, self.policy()), **kwargs)
        spawner = self._spawner
        if spawner is None:
            spawner = await anyio.to_thread.run_sync(self._start_spawner, argv)
        server = self._server
        if server is not None:  # not root: commands start inside the holder's namespaces
            from launcher.tools.sandbox import entry

            if (kwargs.get("stdout"), kwargs.get("stderr")) != (PIPE, STDOUT):
                raise ValueError("a sandboxed command's output is one pipe")
            if kwargs.get("stdin") not in (None, DEVNULL):
                raise ValueError("a sandboxed command reads no input")
            cwd = str(kwargs.get("cwd") or os.getcwd())  # resolved in there, not here
            try:
                return await entry.start(server, argv, env=kwargs.get("env") or {}, cwd=cwd)
            except OSError as exc:
                holder = self._holder
                # A namespace whose init is dying refuses forks (ENOMEM) before it is gone.
                if holder is not None and await anyio.to_thread.run_sync(holder.ended, 10.0):
                    raise OSError(
                        "the sandbox's PID namespace has ended (its holder was killed):"
                        " this session can start no more commands"
                    ) from exc
                raise
        popen = await spawner.popen(argv, start_new_session=True, close_fds=True, **kwargs)
        return ConfinedProcess(popen)

    def _start_spawner(self, argv: list[str]) -> ConfinedSpawner:
        with self._lock:
            if self._spawner is None:
                policy = self.policy()
                if argv[:3] == [cgroup.SHELL, "-c", cgroup.JOIN_SCRIPT]:
                    # The command joins the session's cgroup before it runs: that one write.
                    policy = policy.with_writable_file(Path(argv[3]))
                holder, missing = holder_for(policy)
                if holder is not None and holder.init is not None and holder.problem is None:
                    # The commands' own /proc, mounted there after the policy was made.
                    policy = policy.with_readable(Path(f"/proc/{holder.pid}/root/proc"))
                try:
                    # Root makes the commands' PID namespace on its confined thread itself.
                    spawner = ConfinedSpawner(policy, pid_namespace=holder is None)
                except BaseException:
                    if holder is not None:
                        holder.close()
                    raise
                if holder is not None:
                    try:
                        self._server = ForkServer.start(
                            spawner.popen_sync, holder.fds, network=policy.network
                        )
                    except OSError as exc:  # as with no holder: Landlock and seccomp hold
                        holder.close()
                        holder, missing = None, f"no fork server ({exc})"
                if missing is not None:
                    if self.mode is SandboxMode.REQUIRED:
                        spawner.close()
                        raise SandboxRefused(
                            f"{unavailable_line(missing)}; this agent's sandbox is required, "
                            "so the command was not run"
                        )
                    self._say(degraded_line(missing))
                if holder is not None and holder.problem is not None:
                    self._say(pidns_line(holder.problem))
                if holder is not None and holder.init is not None and self._on_init:
                    self._on_init(holder.init)
                if isinstance(spawner.init, str):
                    self._say(pidns_line(spawner.init))
                elif spawner.init is not None:
                    strays.note_child(spawner.init.pid)  # started on purpose, reaped at the end
                    if self._on_init:
                        self._on_init(spawner.init.pid)
                self._holder, self._spawner = holder, spawner
            return self._spawner

    def _say(self, line: str) -> None:
        said = runtime.current().sandbox.said
        if line not in said:  # on stderr, and to the model with its command's output
            said.add(line)
            self.notices.append(line)
            sys.stderr.write(f"subagent: sandbox: {line}\n")

    def _init(self) -> pidns.Init | None:
        """The init of the commands' PID namespace (the holder's, or root's thread's)."""
        with self._lock:
            holder, spawner = self._holder, self._spawner
        init = holder.commands_init if holder is not None else spawner and spawner.init
        return init if isinstance(init, pidns.Init) else None

    def end_command(self) -> bool:
        """After a command: kill every process it left (all of the commands' PID namespace
        but its init) and wait until they are gone; False if they did not go in time."""
        return self._ends.end(self._empty)

    def _empty(self) -> bool:
        init = self._init()
        ended = init is None or init.sweep()
        self.left_running = self.left_running or not ended
        return ended

    def end_commands(self) -> bool:
        """Kill every process the commands started (their PID namespace, where there is
        one) and wait until they are gone; False if they did not go in time."""
        init = self._init()
        return init is None or init.end()

    def restore_protected(self) -> list[str]:
        """Put back what the model's processes (all gone by now) changed in the protected
        places; the places put back."""
        with self._checking:
            return self.guard.restore()

    def defuse_nested(self) -> list[str]:
        """Defuse the git repositories the model made (or changed) in the workspace; what
        was done, one line per repository."""
        with self._checking:
            return [] if self.nested is None else self.nested.check()

    def cut_line(self) -> str | None:
        """What is said of a walk for git repositories cut short (None: not cut)."""
        return None if self.nested is None else self.nested.cut_line()

    def close(self) -> None:
        """End what the commands left running, the confined thread, put the protected
        places back, and remove the private temporary directory."""
        try:
            # Nothing of the model's may write after the put-back: its processes go first.
            if not self.end_commands():
                self.unrepaired_at_end.append(
                    f"the processes the commands left (still running after {pidns.END_LIMIT_S:g}s)"
                )
            self.restore_protected()
            defused = self.defuse_nested()
            if defused:
                sys.stderr.write(f"subagent: {defused_line(defused)}\n")
            cut = self.cut_line()
            if cut is not None:
                sys.stderr.write(f"subagent: {cut}\n")
            self.unrepaired_at_end.extend(self.unrepaired)
        finally:
            self.guard.release()
        with self._lock:
            spawner, self._spawner = self._spawner, None
            if spawner is not None and isinstance(spawner.init, pidns.Init):
                spawner.init.close()
            tmp, self._tmp = self._tmp, None
            holder, self._holder = self._holder, None
            server, self._server = self._server, None
        if server is not None:
            server.close()
        if spawner is not None:
            spawner.close()
        if holder is not None:
            holder.close()
        if tmp is not None:
            from launcher.trust.snapshot import remove_dir

            try:
                remove_dir(tmp)
            except OSError as exc:
                shutil.rmtree(tmp, ignore_errors=True)
                if os.path.lexists(tmp):
                    self.unrepaired_at_end.append(f"{tmp} (could not be removed: {exc.strerror})")


def unrepaired_line(paths: list[str]) -> str:
    """What is said of what the model changed that could not be put back or defused."""
    return (
        "what the model changed could not be put back or defused (the user's git or the next "
        f"run may start what it planted; check and remove by hand): {', '.join(paths)}"
    )


def defused_line(defused: list[str]) -> str:
    """What is said of the model's git repositories defused (the user's git would have run
    their config or hooks)."""
    return (
        "git repositories the model made were defused (config keys that run programs and "
        f"hooks removed): {', '.join(defused)}"
    )


def check_start(
    agent: str, settings: SandboxSettings, env: Mapping[str, str] | None = None
) -> None:
    """Before a session starts: RunError for a `required` sandbox the OS cannot give;
    for `on`, the run says `sandbox: unavailable (reason)` once on stderr and goes on."""
    from launcher.errors import RunError

    env = os.environ if env is None else env
    mode = effective_mode(settings, env=env)
    problem = None if mode is SandboxMode.OFF else mechanism_problem(env)
    if problem is None and _legacy(env):
        problem = namespaces_problem()
    if problem is None:
        return
    if mode is SandboxMode.REQUIRED:
        raise RunError(f"agent '{agent}': {unavailable_line(problem)}, and its sandbox is required")
    said = runtime.current().sandbox.said
    if problem not in said:
        said.add(problem)
        sys.stderr.write(f"subagent: {unavailable_line(problem)}; bash runs unconfined\n")


def describe(settings: SandboxSettings, env: Mapping[str, str] | None = None) -> dict[str, object]:
    """An agent's sandbox as `agents --json` shows it: the mode in force, and whether the
    OS can give it (`unavailable`: the reason, or null)."""
    mode = effective_mode(settings, env=env)
    return {
        "mode": str(mode),
        "network": settings.network,
        "deny_read": list(settings.deny_read),
        "write_config": settings.write_config,
        "unavailable": None if mode is SandboxMode.OFF else mechanism_problem(env),
    }
