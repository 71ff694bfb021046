"""Nested sub-agents: the `subagent` tool's children, each in its own worker process.

A child runs like any serve worker: its servers start at its own session start and end
with it, its scope comes from its own agent file — as the top session loaded it: the
child gets that session's config snapshot and never discovers config itself, so an
agent file or MCP server the run wrote into the workspace meanwhile is not read. Depth
is counted down the tree (the top agent is depth 0) and bounded by the smallest
`max_depth` on the way, and its limits by what its parent has left (its usage counts
against the parent's budget); a stop or kill of the parent closes the child's stdin, which ends
the child and, in turn, its children.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from launcher.budget import CURRENT
from launcher.events import RunStatus
from launcher.state import state_home
from launcher.telemetry import traces
from launcher.tools.delegate import Delegate
from launcher.toolset.types import ToolResult


def make_delegate(
    *,
    config: dict[str, Any],
    config_dir: str | None,
    workspace: Path,
    depth: int,
    max_depth: int,
) -> Delegate:
    """The Delegate of an agent at `depth` whose tree may go `max_depth` deep; every child
    runs with `config` (config/snapshot.py), the config the top session started with."""

    async def delegate(agent: str, prompt: str) -> ToolResult:
        # The worker pool is serve's: a plain spawn loads it only when it delegates.
        from launcher.backend.pool import SubAgent, drive_worker
        from launcher.backend.protocol import Job

        if depth + 1 > max_depth:
            return ToolResult(
                f"Sub-agent '{agent}' was not started: max_depth {max_depth} reached "
                f"(this agent is at depth {depth}).",
                is_error=True,
            )
        entry = SubAgent(id=f"nested-{secrets.token_hex(4)}", agent=agent, status=RunStatus.RUNNING)
        budget = CURRENT.get()  # the delegating run's: the child gets what it has left
        job = Job(
            ceiling=budget.remainder().as_dict() if budget is not None else None,
            prompt=prompt,
            agent=agent,
            config=config,
            config_dir=config_dir,
            workspace=str(workspace),
            depth=depth + 1,
            max_depth=max_depth,
            trace=traces().carrier(),  # the delegating call's span: the child's parent
        )
        try:
            await drive_worker(entry, job, log_path=state_home() / "nested" / f"{entry.id}.log")
        finally:
            if budget is not None:
                budget.charge_child(entry.usage)  # what the child spent, its children's too
        if entry.status.ok:
            return ToolResult(entry.result or "(no answer)")
        why = f": {entry.error}" if entry.error else ""
        return ToolResult(f"[{entry.status}{why}] {entry.result}".rstrip(), is_error=True)

    return delegate
