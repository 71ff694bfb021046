"""How a command runs: signals, the one exit-code map, and the `tools`/`spawn` bodies.

Imported by every command, so nothing heavy at module level (anyio included).
"""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from launcher.errors import Interrupted, SubagentError

if TYPE_CHECKING:
    from launcher.config.types import Config

T = TypeVar("T")

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Signals that end a run cleanly (exit status 128 + the signal number)."""


def guarded(fn: Callable[[], int | None]) -> int:
    """The one place errors become exit codes: config/usage 2, run failures 1, signals 128+N."""
    try:
        return fn() or 0
    except SubagentError as exc:
        sys.stderr.write(f"subagent: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("subagent: interrupted\n")
        return 128 + signal.SIGINT


def finish(code: int) -> None:
    """Leave without the interpreter's slow teardown of the SDK (~0.4 s); output flushed first."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


async def with_signals(main: Callable[[], Awaitable[T]]) -> T:
    """Run `main`; SIGINT/SIGTERM/SIGHUP cancel it (every `finally` and shield runs)."""
    import anyio

    received: list[int] = []
    result: list[T] = []
    failures: list[Exception] = []
    # Open around the task group, not inside it: a second Ctrl-C during the (bounded)
    # shutdown is swallowed instead of killing the launcher halfway through it.
    with anyio.open_signal_receiver(*SIGNALS) as signals:
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                async for signum in signals:
                    received.append(signum)
                    tg.cancel_scope.cancel()
                    return

            async def body() -> None:
                try:
                    result.append(await main())
                except Exception as exc:  # re-raised below, unwrapped from the task group
                    failures.append(exc)
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            tg.start_soon(body)
    if failures:
        raise failures[0]
    if received:
        raise Interrupted(received[0])
    return result[0]


def run_async(main: Callable[[], Awaitable[T]]) -> T:
    """Run a command's async body under signal handling on a fresh event loop."""
    import anyio

    # Everything imported so far lives for the whole process: moving it out of the
    # collector's view cut worst-case pauses while listing 2 000 tools from 220 to 83 ms.
    gc.freeze()
    return anyio.run(with_signals, main)


def run_tools(
    config: Config,
    agent_name: str,
    *,
    ext: Sequence[str],
    settle: float,
    json_out: bool,
    workspace: Path,
    verbose: bool,
    no_lock: bool = False,
) -> int:
    """`subagent tools`: start a session, wait for the barrier + settle, print, end."""
    from launcher.assemble import assemble_session
    from launcher.cli.render import ProgressLine, print_tools_table
    from launcher.cli.views import tools_report

    session = assemble_session(config, agent_name, ext=ext, workspace=workspace, lock=not no_lock)
    progress = ProgressLine() if sys.stderr.isatty() and not json_out else None
    if progress is not None:
        session.bus.subscribe(progress)

    async def main() -> dict[str, Any]:
        import anyio

        async def body(s: Any) -> dict[str, Any]:
            if settle > 0:
                await anyio.sleep(settle)
            return tools_report(s)

        return await session.run(body)

    try:
        report = run_async(main)
    finally:
        if progress is not None:
            progress.clear()
    if json_out:
        print(json.dumps(report, indent=2))
    else:
        print_tools_table(report)
    if verbose:
        sys.stderr.write(f"session logs: {session.dir}\n")
    return 0


def run_spawn(
    config: Config,
    agent_name: str,
    prompt: str,
    *,
    ext: Sequence[str],
    model: str | None,
    max_turns: int | None,
    base_url: str | None,
    json_out: bool,
    workspace: Path,
    verbose: bool,
    config_dir: Path | None = None,
    no_lock: bool = False,
    history: Any = None,
    isolation: str | None = None,
) -> int:
    """`subagent spawn`: run the agent to its end; exit 0 completed, 1 otherwise.

    With `history` (a StoredSession, from `--resume`) the run continues that session; with
    `isolation` (or the agent's own) a new run works in a fresh git worktree.
    """
    from launcher.assemble import assemble_session, resolve_request, run_agent
    from launcher.backend.nested import make_delegate
    from launcher.events import RunStatus, jsonl_sink
    from launcher.worktree import describe, isolated_workspace

    agent = resolve_request(config, agent_name, ext)
    # A resume continues in its stored workspace (the kept worktree, if any).
    mode = None if history is not None else isolation or agent.isolation

    def report(end: Any) -> None:
        # After the session's own events: the worktree is summed up once every process
        # of the run is gone.
        if json_out:
            sys.stdout.write(end.to_json() + "\n")
        else:
            sys.stderr.write(describe(end) + "\n")

    with isolated_workspace(workspace, mode, label=agent_name, report=report) as where:
        delegate = make_delegate(
            config_dir=str(config_dir.resolve()) if config_dir else None,
            workspace=where.resolve(),
            depth=0,
            max_depth=agent.max_depth,
        )
        session = assemble_session(
            config,
            agent_name,
            ext=ext,
            workspace=where,
            delegate=delegate,
            lock=not no_lock,
            config_dir=config_dir,
            session_id=history.id if history is not None else None,
        )
        if json_out:
            session.bus.subscribe(jsonl_sink(sys.stdout))
        else:
            from launcher.cli.render import SpawnRenderer

            session.bus.subscribe(SpawnRenderer())

        async def main() -> RunStatus:
            return await run_agent(
                session,
                prompt,
                model=model,
                max_turns=max_turns,
                base_url=base_url,
                history=history,
            )

        status = run_async(main)
        if verbose:
            sys.stderr.write(f"session logs: {session.dir}\n")
    return 0 if status.ok else 1


def run_batch_command(
    tasks: Path,
    *,
    out: Path | None,
    jobs: int,
    engine: str,
    options: Any,
    retry_failed: bool,
) -> int:
    """`subagent batch`: exit 0 every task completed, 1 any failed (in this run or recorded
    in `out` from an earlier one), 2 a bad input line or an unusable `--out`."""
    from launcher.cli.render import BatchBar, print_batch_summary
    from launcher.engines.batch import plan_rerun, run_batch
    from launcher.engines.factory import engine_factory
    from launcher.errors import UsageError

    make_engine = engine_factory(engine)
    if not tasks.is_file():
        raise UsageError(f"{tasks}: no such tasks file")
    if out is not None:
        check_writable(out, "--out")
    plan = plan_rerun(out, retry_failed=retry_failed)
    bar = BatchBar() if sys.stderr.isatty() else None
    sink = out.open("a", encoding="utf-8") if out is not None else sys.stdout

    async def main() -> Any:
        return await run_batch(
            tasks,
            make_engine(options),
            out=sink,
            jobs=jobs,
            skip=plan.skip,
            failed_before=plan.failed_before,
            on_change=bar,
        )

    try:
        progress = run_async(main)
    finally:
        if bar is not None:
            bar.clear()
        if sink is not sys.stdout:
            sink.close()
    print_batch_summary(progress)
    if options.verbose:
        from launcher.state import state_home

        sys.stderr.write(f"batch: worker logs in {state_home() / 'batch'}\n")
    return progress.exit_code()


def check_writable(path: Path, option: str) -> None:
    """UsageError unless `path` can be appended to (its directory exists, it is a file)."""
    from launcher.errors import UsageError

    if not path.parent.is_dir():
        raise UsageError(f"{option} {path}: directory {path.parent} does not exist")
    try:
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write: {exc.strerror or exc}") from exc


def run_lock(config: Config, agents: Sequence[str], *, settle: float, workspace: Path) -> int:
    """`subagent lock`: pin each agent's surface, write the lock, print each agent's diff."""
    from launcher.check.lock_writer import lock_agents
    from launcher.cli.render import print_lock_report

    async def main() -> Any:
        return await lock_agents(config, agents, settle=settle, workspace=workspace)

    results = run_async(main)
    print_lock_report(results, config.lock_path)
    return 0


def load_resume(ref: str) -> Any:
    """`spawn --resume REF`: the stored session (agent, config dir, history); UsageError if none."""
    from launcher.state import state_home
    from launcher.store.history import load_resumable

    return load_resumable(state_home(), ref)


def run_check(
    config: Config,
    named: Sequence[str],
    *,
    jobs: int,
    junit: Path | None,
    json_out: bool,
    workspace: Path,
) -> int:
    """`subagent check`: exit 0 every check passed, 1 any failed (2: bad config, raised)."""
    from launcher.check.cases import select_cases
    from launcher.check.report import check_report, write_junit
    from launcher.check.runner import preflight, run_checks
    from launcher.cli.render import CheckBar, print_check_table
    from launcher.errors import UsageError

    cases = select_cases(config, named)
    if not cases:
        raise UsageError("no checks: no agent has an expect: block and there is no checks/*.yaml")
    preflight(config, cases)
    bar = CheckBar() if sys.stderr.isatty() else None

    async def main() -> Any:
        return await run_checks(config, cases, jobs=jobs, workspace=workspace, on_change=bar)

    try:
        results = run_async(main)
    finally:
        if bar is not None:
            bar.clear()
    report = check_report(results)
    if junit is not None:
        write_junit(results, junit)
    if json_out:
        print(json.dumps(report, indent=2))
    else:
        print_check_table(report)
    return 0 if report["failed"] == 0 else 1
