"""The first `spawn_subagent` calls a host makes, run before the MCP SDK has loaded.

Loading the SDK takes serve ~0.7 s of CPU; a worker already imported (the spare) runs a
short sub-agent in less. So a plain `spawn_subagent` call the early face (early.py) reads
before the hand-over is not queued for the SDK: it goes to the pool at once, through the
same checks as the SDK server's (spawning.py), and its answer is written to the wire here,
in the form the SDK server writes (tests/e2e/test_serve_first_call.py holds the two equal).

Taken only when nothing in the call needs the SDK: no `_meta` (a progress token, trace
context), no `task`, and a host that did not declare elicitation (its sub-agent's input
requests could not reach it without the SDK's session); serve takes none while tracing is
on (the SDK's server span is a traced run's parent). Everything else waits for the SDK as
before. A `notifications/cancelled` naming a call taken here stops its sub-agent (the
SDK would not know the id), and no answer is written for it; it covers the calls with that
id taken before it, not a later call that reuses the id (which the SDK would answer too).
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from launcher.backend import catalog
from launcher.backend.arguments import check_arguments

TOOL = "spawn_subagent"
PLAIN_PARAMS = frozenset({"name", "arguments"})
"""A call with anything else (`_meta`, `task`) waits for the SDK."""
CANCELLED = "notifications/cancelled"
INTERNAL_ERROR = -32603
HEAD_START_S = 5.0
"""How long serve lets calls taken before the SDK's import reach their workers before it
imports the SDK (which takes the interpreter for ~0.7 s); bounded, so a stuck start never
holds the SDK up for long."""


def _key(rid: Any) -> tuple[str, Any]:
    """A request id as a dict key: 1 and "1" are different ids."""
    return (type(rid).__name__, rid)


class _Call:
    """One call taken here: its run once started, and whether the host cancelled it."""

    __slots__ = ("cancelled", "entry")

    def __init__(self) -> None:
        self.cancelled = False
        self.entry: Any = None


def wire(rid: Any, body: dict[str, Any]) -> bytes:
    """One framed JSON-RPC response (`body`: its `result` or `error`), as the SDK's stdio
    server frames it."""
    answer = {"jsonrpc": "2.0", "id": rid, **body}
    return json.dumps(answer, separators=(",", ":")).encode() + b"\n"


def text_result(
    text: str, structured: dict[str, Any] | None = None, *, is_error: bool = False
) -> dict[str, Any]:
    """A CallToolResult in wire form, its keys in the SDK server's order."""
    out: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": is_error}
    if structured is not None:
        out["structuredContent"] = structured
    return out


def run_answer(entry: Any) -> dict[str, Any]:
    """A run's answer as `spawn_subagent` returns it (tasks/store.run_result, wire form)."""
    snapshot = entry.snapshot()
    if entry.status.ok:
        text = entry.result
    else:
        why = f": {entry.error}" if entry.error else ""
        text = f"[{entry.status}{why}] {entry.result}"
    from launcher.events import RunStatus

    return text_result(text, snapshot, is_error=entry.status is RunStatus.ERROR)


class FirstCalls:
    """Plain `spawn_subagent` calls taken by the early face; `serve` runs and answers them.

    `offer` and `note` run on the face's reader thread; `serve` on serve's event loop.
    """

    def __init__(self, write: Callable[[bytes], None]) -> None:
        self._write = write
        self._inbox: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._taken: dict[tuple[str, Any], int] = {}
        """Ids of calls taken here and not yet answered, with how many (a host may reuse
        an id); read on the reader thread, so changed under `_lock`."""
        self._lock = threading.Lock()
        self._starting = 0
        """Calls being checked and queued on the loop now."""
        self._entries: list[Any] = []
        self.slots = 1
        """Sub-agents the pool runs at once (open_pool sets it)."""
        """The sub-agents started here (their pool entries)."""

    def launched(self) -> bool:
        """Whether every call taken so far that has a slot has its job in a worker (or has
        ended); calls beyond the pool's slots wait for one, and the SDK need not."""
        running = [e for e in self._entries if not e.done.is_set()][: self.slots]
        return (
            self._inbox.empty()
            and self._starting == 0
            and all(e.process is not None or e.done.is_set() for e in running)
        )

    def open_pool(
        self,
        tg: Any,
        config: Any,
        config_dir: Path | None,
        workspace: Path,
        state_home: Path,
        scripted_dirs: tuple[Path, ...],
        *,
        spares: Any,
        model: str | None,
        max_concurrent: int,
        no_lock: bool,
    ) -> Any:
        """serve's pool, made in `tg` before the SDK loads, with the task that runs the
        calls taken meanwhile (`serve`); the SDK face then shares the pool."""
        from launcher.backend.pool import SubagentManager
        from launcher.backend.spawning import Spawner

        manager = SubagentManager(
            tg,
            config_dir=config_dir,
            workspace=workspace,
            state_home=state_home,
            default_model=model,
            max_concurrent=max_concurrent,
            no_lock=no_lock,
            spares=spares,
        )
        spawner = Spawner(manager, config, config_dir, workspace, scripted_dirs)
        self.slots = max_concurrent
        tg.start_soon(self.serve, spawner.start, manager.stop)
        return manager

    async def head_start(self) -> None:
        """Wait (at most HEAD_START_S) until the calls taken so far reached their workers:
        serve imports the SDK only then, so their start-up never shares the interpreter
        with it."""
        from launcher.procs.group import wait_until

        await wait_until(self.launched, HEAD_START_S)

    def offer(self, message: dict[str, Any], initialize: dict[str, Any] | None) -> bool:
        """Take `message` (a request the face may not answer itself) if it is a plain
        `spawn_subagent` call whose run needs nothing of the SDK; else False."""
        if initialize is None or message.get("method") != "tools/call":
            return False
        params = message.get("params")
        if not isinstance(params, dict) or not set(params) <= PLAIN_PARAMS:
            return False
        arguments = params.get("arguments")
        if params.get("name") != TOOL or not isinstance(arguments, dict):
            return False
        capabilities = (initialize.get("params") or {}).get("capabilities") or {}
        if "elicitation" in capabilities:
            return False  # its runs' input requests go to the host through the SDK
        schema = catalog.tool_schema(TOOL)
        try:
            # What the SDK's parser refuses (a lone surrogate escape) it refuses here too.
            json.dumps(message, ensure_ascii=False).encode()
            check_arguments(TOOL, schema or {}, arguments)
        except Exception:  # the SDK server answers it, with its own error text
            return False
        key = _key(message["id"])
        with self._lock:
            self._taken[key] = self._taken.get(key, 0) + 1
        self._inbox.put(("call", message))
        return True

    def note(self, line: str) -> None:
        """A host line seen at any time: a cancellation of a call taken here is passed on."""
        if not self._taken or CANCELLED not in line:
            return
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return
        if not isinstance(message, dict) or message.get("method") != CANCELLED:
            return
        params = message.get("params")
        rid = params.get("requestId") if isinstance(params, dict) else None
        if isinstance(rid, str | int) and not isinstance(rid, bool) and _key(rid) in self._taken:
            self._inbox.put(("cancel", rid))

    async def serve(self, start: Callable[..., Any], stop: Callable[[Any], Any]) -> None:
        """Run each taken call (`start`: spawning.Spawner.start) and write its answer; stop
        a cancelled one's sub-agent (`stop`: the pool's). Runs until cancelled."""
        import anyio

        live: dict[tuple[str, Any], list[_Call]] = {}
        """The calls taken and not yet answered, by id; the inbox keeps the host's order,
        so a cancellation reaches exactly the calls taken before it."""
        try:
            async with anyio.create_task_group() as tg:
                while True:
                    kind, item = await anyio.to_thread.run_sync(
                        self._inbox.get, abandon_on_cancel=True
                    )
                    if kind == "end":
                        return
                    if kind == "cancel":
                        for call in live.get(_key(item), ()):
                            call.cancelled = True
                            if call.entry is not None:
                                tg.start_soon(stop, call.entry)
                        continue
                    call = _Call()
                    live.setdefault(_key(item["id"]), []).append(call)
                    tg.start_soon(self._run, item, call, live, start, stop)
        finally:
            self._inbox.put(("end", None))  # the thread left waiting on the inbox ends too

    async def _run(
        self,
        message: dict[str, Any],
        call: _Call,
        live: dict[tuple[str, Any], list[_Call]],
        start: Callable[..., Any],
        stop: Callable[[Any], Any],
    ) -> None:

        from launcher.errors import SubagentError

        rid, key = message["id"], _key(message["id"])
        args = dict(message["params"]["arguments"])
        self._starting += 1
        try:
            entry = await start(args)
        except SubagentError as exc:
            answer = text_result(str(exc), is_error=True)
        except (KeyError, TypeError, ValueError) as exc:
            answer = text_result(f"Invalid arguments for {TOOL}: {exc}", is_error=True)
        except Exception as exc:  # one call's failure must not end serve: its caller hears
            failed = {"code": INTERNAL_ERROR, "message": f"{type(exc).__name__}: {exc}"}
            await self._answer(rid, key, call, live, {"error": failed})
            return
        else:
            call.entry = entry
            self._entries.append(entry)
            if call.cancelled:
                await stop(entry)
            if args.get("background"):
                answer = text_result(json.dumps({"agent_id": entry.id}), {"agent_id": entry.id})
            else:
                self._starting -= 1
                try:
                    await entry.done.wait()
                finally:
                    self._starting += 1
                answer = run_answer(entry)
        finally:
            self._starting -= 1
        await self._answer(rid, key, call, live, {"result": answer})

    async def _answer(
        self,
        rid: Any,
        key: tuple[str, Any],
        call: _Call,
        live: dict[tuple[str, Any], list[_Call]],
        body: dict[str, Any],
    ) -> None:
        import anyio

        calls = live.get(key, [])
        if call in calls:
            calls.remove(call)
        if not calls:
            live.pop(key, None)
        with self._lock:
            left = self._taken.get(key, 0) - 1
            if left > 0:
                self._taken[key] = left
            else:
                self._taken.pop(key, None)
        if not call.cancelled:  # a cancelled request is answered by nobody
            await anyio.to_thread.run_sync(self._write, wire(rid, body))
