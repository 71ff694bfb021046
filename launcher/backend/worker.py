"""The child side of serve's pipe: one sub-agent in its own OS process.

`python -m launcher.backend.worker` reads its Job and control messages from stdin and
writes the session's event stream to stdout (protocol.py). Stdin EOF means the driver is
gone: the agent stops and the session closes, so the worker's servers never outlive it.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from launcher.backend import protocol
from launcher.backend.protocol import Job
from launcher.events import AgentEnd, Event, EventBus, RunStatus, SessionEnd, jsonl_sink

PRELOAD = (
    "anyio._backends._asyncio",
    "importlib.readers",
    "importlib.resources.readers",  # the built-in agents are package files
    "zipfile",
    "launcher.assemble",
    "launcher.run_plan",
    "launcher.config.discovery",
    "launcher.config.snapshot",
    "launcher.backend.nested",
    "launcher.models.factory",
    "launcher.models.scripted",
    "launcher.agent",
    "launcher.session",
    "launcher.store.sink",
    "launcher.store.history",
    "launcher.tools",
    "launcher.tools.delegate",
    "launcher.tools.sandbox",
    "launcher.tools.sandbox.apply",
    "launcher.worktree",
    "launcher.procs.watchdog",
)
"""What every session imports on its way: a spare imports it while it waits, so a spawn
it serves does not."""
FULL_PRELOAD = (
    "httpx2",  # an HTTP model's client and transport
    "launcher.models.openai",
    "launcher.models.anthropic",
    "genai_prices",  # the price table an HTTP model's replies are priced from
    "launcher.bridge.connection",  # a session's MCP servers (the SDK loads at connect)
)
"""What only some sessions import (an HTTP model, MCP servers), with the model client's
trust store: a spare started without `--lean` loads these too."""
SEALED_FLAG = "--sealed"
"""The worker's argument on a Ray node: it offers a key and opens its Job and serve's
secrets, sealed to it (procs/sealed.py)."""
PR_SET_NAME = 15
PR_GET_NAME = 16
PR_SET_PDEATHSIG = 1


class Control:
    """Steer/stop messages that arrive before or during the run reach the loop; answers
    reach the input request that asked.

    A stop also cuts the session's start-up short: a worker told to stop while its
    servers are still connecting must not wait for their start-up timeouts.
    """

    def __init__(self) -> None:
        self.loop: Any = None
        self.session: Any = None
        self.pending: list[dict[str, Any]] = []
        self.asked: dict[str, tuple[anyio.Event, list[dict[str, Any] | None]]] = {}
        self._asks = 0

    async def ask(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """Put an input request to serve's host (bridge/elicitation.Asker); its answer."""
        self._asks += 1
        request_id = f"in-{self._asks}"
        got: tuple[anyio.Event, list[dict[str, Any] | None]] = (anyio.Event(), [])
        self.asked[request_id] = got
        # The question goes to serve's host: masked like everything else that leaves the
        # run (a hostile model or server may write a secret into it).
        request = self.mask().value(request)
        try:
            _write_line(protocol.encode(protocol.ask(request_id, request)).decode())
            await got[0].wait()
        finally:
            self.asked.pop(request_id, None)
        return got[1][0] if got[1] else None

    def mask(self) -> Any:
        """The session's mask, or (before it exists) one of this process's secrets."""
        if self.session is not None:
            return self.session.mask
        from launcher.secrets import LiveMask, process_secrets

        return LiveMask(process_secrets())

    def attach(self, loop: Any) -> None:
        self.loop = loop
        for message in self.pending:
            self.apply(message)
        self.pending.clear()

    def apply(self, message: dict[str, Any]) -> None:
        if message.get("op") == protocol.ANSWER:
            waiting = self.asked.get(str(message.get("id")))
            if waiting is not None:
                result = message.get("result")
                waiting[1].append(result if isinstance(result, dict) else None)
                waiting[0].set()
        elif self.loop is None:
            self.pending.append(message)
        elif message.get("op") == protocol.STEER:
            self.loop.steer(str(message.get("message", "")))
        elif message.get("op") == protocol.STOP:
            self.loop.stop()
            if self.session is not None:
                self.session.abort_start()


async def _read_control(control: Control) -> None:
    while True:
        line = await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        if not line:
            control.apply(protocol.stop())
            for event, _ in control.asked.values():
                event.set()  # nobody will answer: each falls back to its own answer
            return
        message = protocol.decode(line)
        if message is not None:
            control.apply(message)


async def run_job(job: Job) -> RunStatus:
    """Run one job to its end, events to stdout; returns the final status."""
    from launcher.assemble import assemble_session, plan_run, run_agent
    from launcher.bridge.asking import asking
    from launcher.budget import Limits
    from launcher.config.discovery import resolve_agent
    from launcher.run_plan import ModelChoice, StoreSettings
    from launcher.state import state_home
    from launcher.store.history import load_resumable
    from launcher.store.owner import Owner
    from launcher.worktree import isolated_workspace

    bus = EventBus()
    bus.subscribe(jsonl_sink(sys.stdout))
    workspace = Path(job.workspace)
    control = Control()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_read_control, control)
        try:
            owner = Owner.from_json(job.owner)
            history = load_resumable(state_home(), job.resume, owner=owner) if job.resume else None
            config_dir = Path(job.config_dir) if job.config_dir else None
            config, pins, frozen = _config(job, config_dir, workspace)
            name = history.agent if history is not None else job.agent
            # Resolved once: here when its own `isolation` decides, else by the plan (after
            # the worktree is made, where a bad name or --ext is reported).
            agent = None if history or job.isolation else resolve_agent(config, name)
            # A resume continues in its stored workspace (the kept worktree, if any).
            isolation = None if history else job.isolation or (agent.isolation if agent else None)
            with (
                isolated_workspace(
                    workspace, isolation, label=job.label or name, report=_emit_line
                ) as where,
                asking(control.ask) if job.ask_host else contextlib.nullcontext(),
            ):
                delegate = _delegate(config, frozen, job, where)
                plan = plan_run(
                    config,
                    agent or name,
                    ext=job.ext,
                    workspace=where,
                    lock=not job.no_lock and (pins is not None or job.config is None),
                    pins=pins,
                    store=StoreSettings(config_dir=config_dir, depth=job.depth, owner=owner),
                    history=history,
                    model=ModelChoice(job.model, script=job.script),
                    limits=Limits(max_turns=job.max_turns).over(Limits.from_mapping(job.limits)),
                    ceiling=Limits.from_mapping(job.ceiling),
                )
                session = assemble_session(plan, bus=bus, delegate=delegate)
                control.session = session
                status = await run_agent(session, job.prompt, on_loop=control.attach)
        except Exception as exc:  # config, model or server errors end this job, not serve
            status = RunStatus.ERROR
            # To the driver only: a session that never started keeps no record.
            _emit_line(AgentEnd(status=RunStatus.ERROR, error=str(exc)))
            _emit_line(SessionEnd(error=str(exc)))
        tg.cancel_scope.cancel()
    return status


def _config(job: Job, config_dir: Path | None, workspace: Path) -> tuple[Any, Any, Any]:
    """(config, lock pins, snapshot for children): the job's snapshot thawed, or (a batch
    task) the config discovered now, at the run's start, and frozen for its children."""
    from launcher.config.snapshot import snapshot_of, thaw

    if job.config is not None:
        thawed = thaw(job.config)
        return thawed.config, thawed.lock, job.config
    from launcher.config.discovery import load_config

    config = load_config(config_dir, cwd=workspace)
    return config, None, snapshot_of(config, lock=not job.no_lock)


def _delegate(config: Any, frozen: dict[str, Any], job: Job, workspace: Path) -> Any:
    """The `subagent` tool's runner for this job's agent, one level deeper, with the same
    config snapshot (`frozen`) this run started with."""
    from launcher.backend.nested import make_delegate

    spec = config.agents.get(job.agent)
    own = spec.max_depth if spec is not None else 0
    bound = own if job.max_depth is None else min(own, job.max_depth)
    return make_delegate(
        config=frozen,
        config_dir=job.config_dir,
        workspace=workspace,
        depth=job.depth,
        max_depth=bound,
    )


def _emit_line(event: Event) -> None:
    _write_line(event.to_json() + "\n")


def _write_line(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.write(line)
        sys.stdout.flush()


def _preload(*, lean: bool = False, job_waiting: Callable[[], bool] = lambda: False) -> None:
    """A spare's wait: import what the session will, and (unless `lean`) what an HTTP model
    or an MCP server needs, with the model client's trust store. Once `job_waiting`, the
    rest is left to the job: it imports only what it needs, and sooner."""
    for name in PRELOAD:
        with contextlib.suppress(ImportError):  # the job itself then reports what is missing
            importlib.import_module(name)
    with contextlib.suppress(Exception):  # the same failure then meets the session's check
        from launcher.tools.sandbox.apply import mechanism_problem

        mechanism_problem()  # probed once a process (its imports, a thread that confines)
    if lean:
        return
    for name in FULL_PRELOAD:
        if job_waiting():
            return
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    if job_waiting():
        return
    with contextlib.suppress(Exception):  # the same failure then meets the job's own call
        from launcher.assemble import model_tls_context

        model_tls_context()


def _stdin_ready() -> bool:
    """Whether a line (or EOF) waits on stdin, nothing of it read yet."""
    import select

    try:
        return bool(select.select([sys.stdin], [], [], 0)[0])
    except (OSError, ValueError):
        return False


def _set_name(name: str) -> str:
    """Linux: set this process's name (/proc/PID/comm); returns the one it had.

    prctl, not a write to /proc/self/comm: a non-dumpable process does not own that file.
    """
    if not sys.platform.startswith("linux"):
        return name
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
        before = ctypes.create_string_buffer(16)
        prctl(PR_GET_NAME, before, 0, 0, 0)
        prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)
    except (OSError, AttributeError):
        return name
    return before.value.decode(errors="replace")


def _die_with_parent(signum: int) -> None:
    """Linux: have the kernel send `signum` (0: nothing) when serve, this spare's parent,
    dies. A waiting spare ends on stdin EOF, which a stopped one never reads: SIGKILL ends
    it whatever its state. A taken one reads EOF and closes its session itself."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)


def _open_sealed() -> str | None:
    """A worker on a Ray node: serve's secrets and Job, sealed to a key made here
    (procs/sealed.py); the secrets into os.environ as hidden variables, the Job's line
    returned (None, reported, if the box cannot be opened)."""
    from launcher import settings
    from launcher.procs.sealed import Opening
    from launcher.secrets import note_hidden

    # From the pulled hand-over (restore): the driver's key and the task's nonce.
    sender = settings.SEAL_SENDER.take() or ""
    nonce = settings.SEAL_NONCE.take() or ""
    try:
        opening = Opening(sender, nonce)  # this process is non-dumpable already (restore)
    except ValueError as exc:
        _emit_line(AgentEnd(status=RunStatus.ERROR, error=str(exc)))
        return None
    _write_line(protocol.encode(opening.offer()).decode())
    try:
        opened = opening.open(json.loads(sys.stdin.readline() or "{}"))
    except (ValueError, RecursionError) as exc:
        _emit_line(AgentEnd(status=RunStatus.ERROR, error=str(exc)))
        return None
    os.environ.update(opened.secrets)
    note_hidden(opened.secrets)
    return opened.job


def main() -> None:
    """Entry point: the job is the first stdin line (`--spare`: preload, then wait for it;
    `--lean`: preload only what every session needs; `--sealed`: the Job and serve's
    secrets come first, sealed to a key this worker offers)."""
    from launcher import telemetry
    from launcher.backend.spare import LEAN_FLAG, SPARE_FLAG, SPARE_NAME, WARMING_NAME
    from launcher.procs.hidden import refused, restore
    from launcher.runtime import Runtime, install

    install(Runtime())  # this worker's own: what it learns is its sessions' alone
    # The secrets serve handed over, and (a serve or batch worker) its stdin and stdout:
    # before anything reads the environment or the channel.
    restore()
    if refused():
        sys.stderr.write(
            "subagent worker: its hand-over was refused (this process was traced, had other"
            " threads or was still dumpable when it asked): it runs nothing\n"
        )
        os._exit(2)
    sealed = SEALED_FLAG in sys.argv[1:]
    sealed_job = _open_sealed() if sealed else None
    if sealed and sealed_job is None:
        os._exit(2)
    # A worker's parent span comes with its job, never from an inherited TRACEPARENT.
    traces = telemetry.start(parent_from_env=False)
    spare = SPARE_FLAG in sys.argv[1:]
    if spare:
        _die_with_parent(signal.SIGKILL)
        name = _set_name(WARMING_NAME)
        _preload(lean=LEAN_FLAG in sys.argv[1:], job_waiting=_stdin_ready)
        _set_name(SPARE_NAME)
    first = sealed_job if sealed_job is not None else sys.stdin.readline()
    if not first:
        os._exit(2)
    if spare:
        _die_with_parent(0)
        _set_name(name)  # a taken spare looks like any worker
    try:
        job = Job.from_json(first)
        job.workspace = str(Path(job.workspace).resolve())
    except (ValueError, TypeError) as exc:
        _emit_line(AgentEnd(status=RunStatus.ERROR, error=f"bad job: {exc}"))
        os._exit(2)
    with traces.adopt(job.trace, job.trace_link):
        anyio.run(run_job, job)
    traces.shutdown()
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    # Skip the interpreter's slow SDK teardown; every session resource is closed.
    os._exit(0)


if __name__ == "__main__":
    main()
