"""`serve --engine ray --address A`: each sub-agent a Ray task on a running cluster.

The batch engine's seam (ray_engine.py), live: the task runs the worker process on its
node and streams the worker's lines back as they come (a Ray streaming generator), so
serve sees status, turns, progress and input requests as for a local worker; the
session itself is stored by the worker, in SUBAGENT_HOME, as always. Control lines
(steer, stop, the host's answers) go the other way through a small mailbox actor the
task's control thread waits on. A stop that does not end the run in time force-cancels
the task: the Ray worker dies, the sub-agent worker's stdin closes, and it stops.

The worker gets what a local worker gets. Its environment block: this node's variables
that are not secret, and serve's own that a worker reads (`handed_env`: `SUBAGENT_*` —
the sandbox mode, the token file's deny rule, to which the node's Ray token file is
added —, `OTEL_*`, the trace context). Its Job and its secrets (serve's model keys, the
callers' tokens it masks) are never a task argument, a variable Ray sets, or anything
Ray holds in the clear: the worker, once non-dumpable, offers a key over a socket, and
serve sends them sealed to it (procs/sealed.py). The node's own secret variables (Ray's
token) are not passed on at all.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio

from launcher.backend import protocol
from launcher.backend.pool import SubAgent, fold_line
from launcher.backend.protocol import Job
from launcher.engines.ray_engine import RAY_LOG_NAME, _import_ray, _is_loopback, _ray_logs_to
from launcher.engines.ray_node import PASSED_ENV, handed_env, start_sealed_worker
from launcher.errors import RunError, UsageError
from launcher.procs.hidden import handed_secrets
from launcher.procs.sealed import SEAL_KEY_OP, DriverKey
from launcher.state import state_home


class Mailbox:
    """The control lines of one run, from serve to its task (a Ray async actor)."""

    def __init__(self) -> None:
        import asyncio

        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    async def put(self, message: dict[str, Any] | None) -> None:
        """Queue one control message (None: no more)."""
        await self._queue.put(message)

    async def take(self) -> dict[str, Any] | None:
        """The next control message, when there is one."""
        return await self._queue.get()


def stream_on_node(
    workspace: str, env: dict[str, str], log_path: str, mailbox: Any, sender: str
) -> Iterator[str]:
    """The Ray task body: the worker process (in `workspace`) to its end, each line it
    writes yielded.

    `env`: serve's variables for the worker's block (`handed_env`). The worker's first
    line offers its key; the mailbox's first message is serve's answer, its Job and
    secrets sealed to that key: the task never holds them in the clear. `sender`: serve's
    public key, the only one whose box the worker opens.
    """
    import ray

    proc, stdin, stdout, offer = start_sealed_worker(workspace, env, log_path, sender)

    def relay_control() -> None:
        # Until the mailbox says no more (or is gone): each message down the worker's stdin.
        with contextlib.suppress(Exception):
            while (message := ray.get(mailbox.take.remote())) is not None:
                stdin.write(protocol.encode(message))
                stdin.flush()
        # serve let go of the run (its mailbox gone): a worker still running stops, one
        # still waiting for its secrets ends.
        with contextlib.suppress(OSError, ValueError):
            stdin.close()

    threading.Thread(target=relay_control, name="serve-control", daemon=True).start()
    try:
        yield offer.decode("utf-8", "replace")
        for raw in stdout:
            yield raw.decode("utf-8", "replace")
    finally:
        # Its stdin's EOF (this task gone) is what stops a worker still running.
        with contextlib.suppress(OSError, ValueError):
            stdin.close()
        proc.wait()
        stdout.close()


class RayRemote:
    """A run's worker on a Ray node, as the pool controls it (pool.Remote)."""

    def __init__(self, ray: Any, mailbox: Any, stream: Any, job: Job, key: DriverKey) -> None:
        self._ray = ray
        self._key = key
        self._mailbox = mailbox
        self._stream = stream
        self._job = job
        self._held: list[dict[str, Any]] | None = []
        """Control lines held until the worker has its secrets (None: sent at once)."""

    async def send(self, message: dict[str, Any]) -> None:
        if self._held is not None:
            self._held.append(message)
            return
        await _wrap(self._mailbox.put.remote(message))

    async def hand_over(self, offer: dict[str, Any]) -> None:
        """Answer the worker's key offer with its Job and serve's secrets sealed to it,
        then send what was held, in order. Once only: a later offer is never answered."""
        if self._held is None:
            return
        job = self._job.to_line().decode()
        await _wrap(self._mailbox.put.remote(self._key.seal(offer, handed_secrets(), job)))
        while self._held:  # a send while these go out joins the queue
            await _wrap(self._mailbox.put.remote(self._held.pop(0)))
        self._held = None

    async def kill(self) -> None:
        self._ray.cancel(self._stream, force=True)


async def _wrap(ref: Any) -> Any:
    import asyncio

    return await asyncio.wrap_future(ref.future())


class RayDriver:
    """Runs serve's jobs as Ray tasks on the cluster at `address` (pool.Driver)."""

    def __init__(self, address: str) -> None:
        self.address = address
        self._ray: Any = None
        self._task: Any = None
        self._mailbox: Any = None
        self._lock = anyio.Lock()
        self._logs = contextlib.ExitStack()
        self._key: DriverKey | None = None
        """serve's sealing key (made on the first run): workers open its boxes only."""

    async def _connect(self) -> Any:
        async with self._lock:
            if self._ray is None:
                # A cluster on loopback must be joined as one: else Ray swaps 127.0.0.1 in
                # the address for this machine's network address, where nothing listens.
                host = self.address.rpartition(":")[0].strip("[]") or self.address
                ray = _import_ray(loopback=_is_loopback(host))
                self._logs.enter_context(_ray_logs_to(state_home() / "serve" / RAY_LOG_NAME))
                env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
                kwargs = {"address": self.address, "log_to_driver": False}
                try:
                    await anyio.to_thread.run_sync(
                        lambda: ray.init(**kwargs, runtime_env={"env_vars": env})
                    )
                except Exception as exc:
                    raise RunError(
                        f"ray: cannot join the cluster at {self.address}: {exc}"
                    ) from exc
                self._task = ray.remote(stream_on_node).options(
                    num_returns="streaming", max_retries=0
                )
                self._mailbox = ray.remote(Mailbox)
                self._key = DriverKey()
                self._ray = ray
        return self._ray

    async def __call__(self, entry: SubAgent, job: Job, log_path: Path) -> None:
        ray = await self._connect()
        mailbox = self._mailbox.remote()
        key = self._key
        assert key is not None  # made with the connection
        stream = self._task.remote(job.workspace, handed_env(), str(log_path), mailbox, key.public)
        remote = RayRemote(ray, mailbox, stream, job, key)

        async def reply(request_id: str, result: dict[str, Any] | None) -> None:
            await remote.send(protocol.answer(request_id, result))

        entry.inputs.bind(reply)
        try:
            for message in entry.pending:  # queued before the task existed
                await remote.send(message)
            entry.pending.clear()
            entry.remote = remote
            async with anyio.create_task_group() as tg:
                offered = False
                async for ref in stream:
                    line = await ref
                    if not offered:  # the worker's first line: its key for the secrets
                        offered = True
                        offer = protocol.decode(line)
                        if offer is not None and offer.get("op") == SEAL_KEY_OP:
                            await remote.hand_over(offer)
                            continue
                    await fold_line(entry, line, tg)
                tg.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            ray.cancel(stream, force=True)  # serve ends: the task must not run on
            raise
        except Exception as exc:
            if not entry.final:
                first = str(exc).splitlines()[0] if str(exc) else ""
                entry.error = f"ray: {type(exc).__name__}: {first}"
        finally:
            entry.inputs.pending.clear()
            with contextlib.suppress(Exception):
                ray.kill(mailbox)  # its waiting control thread gets an error, and ends
            if not entry.final and not entry.error:
                entry.error = "ray: the worker ended without a final status"

    async def aclose(self) -> None:
        """Leave the cluster (it runs on; only this serve's connection ends)."""
        with anyio.CancelScope(shield=True):
            if self._ray is not None:
                await anyio.to_thread.run_sync(self._ray.shutdown)
            self._logs.close()


def driver_for(engine: str, address: str | None) -> RayDriver | None:
    """The pool's driver for `--engine` (None: local workers); UsageError if it makes no sense."""
    if engine not in ("local", "ray") or (engine == "ray") != bool(address):
        raise UsageError("--engine is local, or ray with --address ADDRESS (a running cluster)")
    return RayDriver(str(address)) if engine == "ray" else None
